import DiscfgCore
import Foundation
import Logging
import Synchronization

/// Writes Lambda's plain-text log lines to standard output, which Lambda sends to
/// CloudWatch Logs: `TIME<TAB>REQUEST-ID<TAB>LEVEL<TAB>message key=value…`.
///
/// The request id comes from the `requestID` metadata the runtime sets per invocation.
public struct LambdaLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level

    /// The metadata key carrying the invocation's request id.
    public static let requestIDKey = "requestID"

    private static let lock = Mutex(())

    public init(level: Logger.Level = .info) {
        logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let requestID = merged.removeValue(forKey: Self.requestIDKey).map { "\($0)" } ?? "-"
        var line = "\(Self.timestamp())\t\(requestID)\t\(event.level.rawValue.uppercased())\t\(event.message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        // One write per line, so lines from concurrent tasks never interleave.
        line = line.replacingOccurrences(of: "\n", with: "\r") + "\n"
        Self.lock.withLock { _ in FileHandle.standardOutput.write(Data(line.utf8)) }
    }

    private static func timestamp() -> String { TimestampFormat.string(from: Date()) }
}
