import DiscfgCore
import DiscfgJSON
import DiscfgWire
import Foundation

/// Prints results in the chosen format: human text, the JSON envelope, or nothing.
/// Every write goes straight to the file descriptor, so output piped to another
/// program (as `watch` is) arrives as it happens.
struct Output {
    let format: OutputFormat

    /// Prints `envelope` as JSON, or `human()` as text.
    func emit(_ envelope: Envelope, human: () -> String) {
        switch format {
        case .json: writeJSON(envelope, pretty: true)
        case .human: line(human())
        default: break
        }
    }

    /// Prints one envelope per line (for streams such as `watch`), or `human()`.
    func emitStreaming(_ envelope: Envelope, human: () -> String) {
        switch format {
        case .json: writeJSON(envelope, pretty: false)
        case .human: line(human())
        default: break
        }
    }

    /// Writes raw bytes to standard output, whatever the format.
    func raw(_ data: Data) {
        StandardOutput.write(data)
    }

    /// Tells a human something on standard error (progress, notes); silent otherwise.
    func note(_ text: String) {
        guard format == .human else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// A warning on standard error, in every format but silent.
    func warn(_ text: String) {
        guard format != .silent else { return }
        FileHandle.standardError.write(Data("discfg: warning: \(text)\n".utf8))
    }

    /// Reports a failure: the error envelope in JSON, one line on standard error otherwise.
    func fail(action: String, _ error: DiscfgError) {
        switch format {
        case .json: writeJSON(Envelope(action: action, error: error), pretty: true)
        case .silent, .slient: break
        case .human:
            // A schema's refusal: one sentence naming the schema, where and why.
            if error.violations.contains(where: { $0.schema != nil }) {
                FileHandle.standardError.write(Data("discfg: \(SchemaViolation.refusal(error.violations))\n".utf8))
                return
            }
            // Documents checked against a schema file: one line per violation, `FILE: POINTER: message (keyword)`.
            if !error.violations.isEmpty {
                FileHandle.standardError.write(Data(error.violations.map { "\($0)\n" }.joined().utf8))
                return
            }
            var text = "discfg: \(error.message)"
            if let current = error.currentItem {
                text += "\n  current: version \(current.version), modRevision \(current.modRevision), value \(Show.preview(current.value, limit: 60))"
            }
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }
    }

    private func line(_ text: String) {
        guard !text.isEmpty else { return }
        StandardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    private func writeJSON(_ envelope: Envelope, pretty: Bool) {
        var data = pretty ? EnvelopeJSON.pretty(envelope) : EnvelopeJSON.data(envelope)
        data.append(UInt8(ascii: "\n"))
        StandardOutput.write(data)
    }
}

/// Standard output, written straight to its descriptor.
///
/// A reader that stops reading (`discfg ls myapp | head -3`) ends the program as it ends
/// `ls` or `cat`, by SIGPIPE, with no message; any other failure to write (a full disk
/// under `discfg export myapp > file`) is one sentence on standard error and exit status 74.
enum StandardOutput {
    static func write(_ data: Data) {
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(STDOUT_FILENO, base + offset, buffer.count - offset)
                if written >= 0 {
                    offset += written
                    continue
                }
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                if code == EPIPE {
                    signal(SIGPIPE, SIG_DFL)
                    raise(SIGPIPE)
                    exit(128 + SIGPIPE)
                }
                FileHandle.standardError.write(Data("discfg: cannot write to standard output: \(String(cString: strerror(code)))\n".utf8))
                exit(74)
            }
        }
    }
}

/// Human renderings of values, times and tables.
enum Show {
    /// A value as text for a table cell or a line: UTF-8 on one line, cut at `limit`
    /// characters; binary as its size.
    static func preview(_ value: Data, limit: Int) -> String {
        guard let text = String(validating: value, as: UTF8.self) else { return "<\(value.count) bytes of binary data>" }
        let oneLine = text.replacingOccurrences(of: "\n", with: "⏎").replacingOccurrences(of: "\t", with: " ")
        return oneLine.count > limit ? String(oneLine.prefix(limit - 1)) + "…" : oneLine
    }

    /// A time relative to `now`: `just now`, `5m ago`, `in 2h`, or a date when far.
    static func relative(_ date: Date, now: Date = Date()) -> String {
        let seconds = Int(now.timeIntervalSince(date).rounded())
        let magnitude = abs(seconds)
        let amount: String
        switch magnitude {
        case ..<5: return "just now"
        case ..<60: amount = "\(magnitude)s"
        case ..<3600: amount = "\(magnitude / 60)m"
        case ..<86_400: amount = "\(magnitude / 3600)h"
        case ..<(86_400 * 60): amount = "\(magnitude / 86_400)d"
        default: return TimestampFormat.string(from: date).prefix(10) + ""
        }
        return seconds >= 0 ? "\(amount) ago" : "in \(amount)"
    }

    /// Rows as aligned columns under a header; the last column is not padded.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// A byte count as `512 B`, `3.2 KiB`.
    static func size(_ bytes: Int) -> String {
        bytes < 1024 ? "\(bytes) B" : String(format: "%.1f KiB", Double(bytes) / 1024)
    }

    /// `expires in 5m` / `expired`, or "" without a TTL.
    static func expiry(_ item: Item, now: Date = Date()) -> String {
        guard let expiresAt = item.expiresAt else { return "" }
        return expiresAt <= now ? "expired" : "expires \(relative(expiresAt, now: now))"
    }
}

/// JSON as people read it: each member and element on a line of its own, indented by two
/// spaces, numbers and strings exactly as the serializer writes them.
enum PrettyJSON {
    /// The indented text of `value`, without a final newline.
    static func text(_ value: JSONValue) throws -> String {
        String(decoding: JSONSerializer.indented(try JSONContent.bytes(value)), as: UTF8.self)
    }
}
