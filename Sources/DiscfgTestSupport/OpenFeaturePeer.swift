import Foundation

/// The OpenFeature Python SDK with its OFREP provider (`openfeature-sdk`,
/// `openfeature-provider-ofrep` from PyPI) run as a peer: `Tests/Peers/ofrep_client.py`,
/// one process for a batch of evaluations against one OFREP base URL. A missing interpreter
/// or package is an error, never a skip.
///
/// ```swift
/// let answers = try await OpenFeaturePeer.evaluate(base: server.baseURL + "/v1/demo", token: nil, [
///     #"{"type": "boolean", "flag": "new-ui", "default": false, "targetingKey": "u1"}"#,
/// ])
/// ```
public enum OpenFeaturePeer {
    /// The peer cannot run: not installed as `scripts/setup` installs it, or it failed.
    public struct Unavailable: Error, CustomStringConvertible {
        /// What is missing and how to install it.
        public let description: String
    }

    /// Evaluates each JSON line of `cases` (see the peer's docstring for their shape) through
    /// the SDK and returns its details, one JSON line each, in the same order.
    ///
    /// - Throws: ``Unavailable`` when python3 or either package is not installed, or the peer fails.
    public static func evaluate(base: String, token: String?, _ cases: [String]) async throws -> [String] {
        let input = Data((cases.joined(separator: "\n") + "\n").utf8)
        let output: ChildProcess.Output
        do {
            output = try await ChildProcess.run(
                "python3", [PeerScript.path("ofrep_client.py"), base] + (token.map { [$0] } ?? []),
                environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), stdin: .bytes(input),
                timeout: .seconds(120)
            )
        } catch let error as ChildProcess.LaunchError {
            throw Unavailable(description: "python3 cannot be started (\(error)): install Python 3 and run scripts/setup")
        }
        if output.stderr.contains("No module named 'openfeature") {
            throw Unavailable(description: "openfeature-sdk 0.10.0 and openfeature-provider-ofrep 0.3.0 are not installed for python3: run scripts/setup\n\(output.stderr)")
        }
        guard output.status == 0 else {
            throw Unavailable(description: "ofrep_client.py failed: \(output.termination?.description ?? "")\n\(output.logs)")
        }
        return output.stdoutLines
    }
}
