import DiscfgCore
import Foundation
import Logging
import Synchronization

/// A log handler that writes swift-log's `StreamLogHandler` lines, but buffered: a busy
/// server logs a line per request, and one `write` per line would cost more than the
/// request.
///
/// Lines are kept in a ``LogSink`` and written out within ``LogSink/flushInterval``, when
/// the buffer fills, at once for warnings and worse, and by ``LogSink/flush()`` (call it
/// before the process exits). Metadata is formatted only when a line is written, not
/// each time it is set (the server sets a request id on every request).
///
/// ```swift
/// let sink = LogSink.standardError
/// let logger = Logger(label: "discfg") { BufferedLogHandler(label: $0, sink: sink) }
/// defer { sink.flush() }
/// ```
public struct BufferedLogHandler: LogHandler {
    private let label: String
    private let sink: LogSink
    private let format: LogFormat
    public var logLevel: Logger.Level = .info
    public var metadata = Logger.Metadata()
    public var metadataProvider: Logger.MetadataProvider?

    /// Creates a handler writing to `sink`, in `format` (``LogFormat/text`` by default).
    public init(label: String, sink: LogSink, format: LogFormat = .text, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.sink = sink
        self.format = format
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var effective = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            effective.merge(provided) { _, provided in provided }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            effective.merge(explicit) { _, explicit in explicit }
        }
        if let error = event.error {
            effective["error.message"] = "\(error)"
            effective["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        guard format == .text else {
            let fields = effective.sorted(by: { $0.key < $1.key }).map { ($0.key, "\($0.value)") } + [("source", event.source)]
            sink.append(format.line(time: LogFormat.now(), level: event.level, label: label, message: "\(event.message)", fields: fields), urgent: event.level >= .warning)
            return
        }
        var line = sink.timestamp()
        line += " \(event.level)"
        if !label.isEmpty { line += " " + label }
        line += ":"
        if !effective.isEmpty {
            for (key, value) in effective.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        }
        line += " [\(event.source)] \(event.message)\n"
        sink.append(line, urgent: event.level >= .warning)
    }
}

/// Where ``BufferedLogHandler`` lines collect before they are written to a file
/// descriptor.
public final class LogSink: Sendable {
    /// Standard error, shared by every logger that writes there.
    public static let standardError = LogSink(fileDescriptor: STDERR_FILENO)

    /// The longest a line waits in the buffer.
    public static let flushInterval: Duration = .milliseconds(100)
    /// A buffer this full is written out at once.
    static let capacity = 32 * 1024

    private struct State {
        var buffer: [UInt8] = []
        var flushScheduled = false
        /// The current second and its text, as `StreamLogHandler` writes it.
        var second: time_t = -1
        var secondText = ""
    }

    private let fileDescriptor: Int32
    /// The file the sink appends to, opened again by ``reopen()``; nil for a descriptor given.
    private let path: String?
    private let state = Mutex(State())

    /// Creates a sink writing to `fileDescriptor`, which it does not close.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        path = nil
    }

    /// Creates a sink appending to the file at `path`, created (mode 0600) if missing.
    /// - Throws: ``DiscfgError`` naming the file and why it cannot be opened for append.
    public init(appendingTo path: String) throws {
        self.fileDescriptor = try Self.openForAppend(path)
        self.path = path
    }

    /// Opens the file again by its path, after it was moved away for rotation: the lines
    /// buffered so far go to the old file, later ones to the new. Throws, keeping the old
    /// file, when it cannot be opened; does nothing for a sink made on a descriptor.
    public func reopen() throws {
        guard let path else { return }
        let opened = try Self.openForAppend(path)
        defer { close(opened) }
        state.withLock { state in
            writeOut(&state.buffer)
            // The same descriptor number, now the new file: writers never see it closed.
            _ = dup2(opened, fileDescriptor)
        }
    }

    private static func openForAppend(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DiscfgError.invalid("file", "cannot open \(path) for append: \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// The local time to the second, `%Y-%m-%dT%H:%M:%S%z`, formatted once a second.
    public func timestamp() -> String {
        let now = time(nil)
        if let cached = state.withLock({ $0.second == now ? $0.secondText : nil }) { return cached }
        var seconds = now
        var local = tm()
        var text = "<unknown>"
        if localtime_r(&seconds, &local) != nil {
            var characters = [CChar](repeating: 0, count: 64)
            strftime(&characters, characters.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            text = String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        state.withLock { state in
            state.second = now
            state.secondText = text
        }
        return text
    }

    /// Adds a line; writes the buffer out now if `urgent` or full, else soon.
    func append(_ line: String, urgent: Bool) {
        append(contentsOf: line.utf8, urgent: urgent)
    }

    /// Adds lines already encoded; writes the buffer out now if `urgent` or full, else soon.
    public func append(bytes lines: [UInt8], urgent: Bool) {
        append(contentsOf: lines, urgent: urgent)
    }

    private func append(contentsOf lines: some Sequence<UInt8>, urgent: Bool) {
        let scheduleFlush = state.withLock { state in
            state.buffer.append(contentsOf: lines)
            if urgent || state.buffer.count >= Self.capacity {
                writeOut(&state.buffer)
                return false
            }
            defer { state.flushScheduled = true }
            return !state.flushScheduled
        }
        if scheduleFlush {
            Task.detached { [self] in
                try? await Task.sleep(for: Self.flushInterval)
                state.withLock { state in
                    state.flushScheduled = false
                    writeOut(&state.buffer)
                }
            }
        }
    }

    /// Writes out every buffered line.
    public func flush() {
        state.withLock { writeOut(&$0.buffer) }
    }

    /// Writes `buffer` out and empties it; called under the lock, so lines keep their order.
    private func writeOut(_ buffer: inout [UInt8]) {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    // Nowhere to log a failure to log: drop the lines.
                    break
                }
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
