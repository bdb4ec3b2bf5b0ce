import Foundation

extension ChildProcess {
    /// The port from the line `discfg serve` or `discfg agent` prints once it listens:
    /// `… on http://127.0.0.1:PORT` (or `https://`).
    /// - Throws: ``ChildProcess/TimedOut`` when no such line came within `timeout`, or the
    ///   process ended first.
    public func announcedPort(timeout: Duration = .seconds(60)) async throws -> Int {
        try await announced(#"on https?://[0-9.]+:(\d+)"#, timeout: timeout)
    }

    /// The port from the line `discfg serve --etcd` prints once the etcd API listens:
    /// `… etcd API over config etcd on 127.0.0.1:PORT`.
    /// - Throws: ``ChildProcess/TimedOut`` as ``announcedPort(timeout:)`` does.
    public func announcedEtcdPort(timeout: Duration = .seconds(60)) async throws -> Int {
        try await announced(#"etcd API over config etcd on 127\.0\.0\.1:(\d+)"#, timeout: timeout)
    }

    /// The number after the last colon of the first match of `pattern` in standard error.
    private func announced(_ pattern: String, timeout: Duration) async throws -> Int {
        try await waitForOutput(timeout: timeout) { output in
            guard let range = output.stderr.range(of: pattern, options: .regularExpression) else { return nil }
            return Int(output.stderr[range].split(separator: ":").last ?? "")
        }
    }
}
