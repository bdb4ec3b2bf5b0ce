import Foundation

/// flagd's reference evaluator (openfeature-flagd-core from PyPI) run as a peer:
/// `Tests/Peers/flagd_reference.py`, one process for a whole batch of evaluations.
///
/// Both generations of `fractional` are needed: 2.0.0 in the interpreter and 1.0.0 under
/// `.build/flagd-core-1.0.0`, as `scripts/setup` installs them. A missing interpreter or
/// package is an error, never a skip.
///
/// ```swift
/// let answers = try await FlagdReference.evaluate(lines)   // one JSON line per case, in order
/// ```
public enum FlagdReference {
    /// The reference cannot run: not installed as `scripts/setup` installs it, or it failed.
    public struct Unavailable: Error, CustomStringConvertible {
        /// What is missing and how to install it.
        public let description: String
    }

    /// Where `scripts/setup` installs openfeature-flagd-core 1.0.0.
    public static var previousGenerationDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../.build/flagd-core-1.0.0").standardized.path
    }

    /// Evaluates each JSON line of `cases` (see the peer's docstring for their shape) and
    /// returns the reference's answers, one JSON line each, in the same order.
    ///
    /// - Throws: ``Unavailable`` when python3 or either package version is not installed; the
    ///   peer's failure with its output otherwise.
    public static func evaluate(_ cases: [String]) async throws -> [String] {
        let directory = previousGenerationDirectory
        guard FileManager.default.fileExists(atPath: directory + "/openfeature_flagd_core-1.0.0.dist-info/METADATA") else {
            throw Unavailable(description: "openfeature-flagd-core 1.0.0 is not installed in \(directory): run scripts/setup")
        }
        let input = Data((cases.joined(separator: "\n") + "\n").utf8)
        let output: ChildProcess.Output
        do {
            output = try await ChildProcess.run(
                "python3", [PeerScript.path("flagd_reference.py"), directory],
                environment: ChildProcess.environment(inheriting: ChildProcess.pythonEnvironment), stdin: .bytes(input),
                timeout: .seconds(600)
            )
        } catch let error as ChildProcess.LaunchError {
            throw Unavailable(description: "python3 cannot be started (\(error)): install Python 3 and run scripts/setup")
        }
        if output.stderr.contains("No module named 'openfeature") {
            throw Unavailable(description: "openfeature-flagd-core 2.0.0 is not installed for python3: run scripts/setup\n\(output.stderr)")
        }
        guard output.status == 0 else {
            throw Unavailable(description: "flagd_reference.py failed: \(output.termination?.description ?? "")\n\(output.logs)")
        }
        return output.stdoutLines
    }
}
