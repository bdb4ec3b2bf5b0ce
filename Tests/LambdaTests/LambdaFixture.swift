import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

extension SharedMotoServer {
    /// The Lambda tests' moto, apart from the one the other suites share: every invocation
    /// has a deadline, and on one moto answering the whole suite in turn, calls have waited
    /// past it (a 30 s deadline ran out in a parallel run).
    static let lambda = SharedMotoServer()
}

/// A fresh DynamoDB table on the Lambda tests' moto server, made with the real CLI, and the
/// environment both the CLI and `discfg lambda` run with.
struct MotoTable: Sendable {
    let moto: MotoServer
    let name: String
    /// `dynamodb://us-east-1/TABLE?endpoint=http://127.0.0.1:PORT`.
    let store: String
    /// The CLI against this table.
    let cli: DiscfgCommand
    /// A scratch directory, used as HOME.
    let directory: URL

    /// Creates the table with `discfg init` (stream and TTL on, as on AWS) on `moto`, the
    /// Lambda tests' moto when nil. Fails, never skips, when moto cannot start.
    static func create(on own: MotoServer? = nil) async throws -> MotoTable {
        let moto: MotoServer
        if let own { moto = own } else { moto = try await SharedMotoServer.lambda.server() }
        let name = "lambda-\(UUID().uuidString.prefix(12).lowercased())"
        let store = "dynamodb://us-east-1/\(name)?endpoint=\(moto.endpoint.absoluteString)"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-lambda-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cli = DiscfgCommand(store: store, environment: Self.awsEnvironment(home: directory))
        let initialized = try await cli.run("init")
        guard initialized.status == 0 else { throw LambdaTestFailure("discfg init failed: \(initialized.stderr)") }
        return MotoTable(moto: moto, name: name, store: store, cli: cli, directory: directory)
    }

    /// The process environment with fake AWS credentials and nothing of the host's AWS or
    /// discfg settings.
    static func awsEnvironment(home: URL) -> [String: String] {
        var environment = ChildProcess.environment()
        environment["HOME"] = home.path
        environment["AWS_ACCESS_KEY_ID"] = "testing"
        environment["AWS_SECRET_ACCESS_KEY"] = "testing"
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_DEFAULT_REGION"] = "us-east-1"
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        return environment
    }

    /// Creates config `name` with the CLI.
    func createConfig(_ name: String) async throws {
        _ = try await cli.json("create", name)
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// `discfg lambda` as a child process, polling an in-process Runtime API emulator.
final class RunningLambda: Sendable {
    let runtime: RuntimeAPIEmulator
    let process: ChildProcess

    private init(runtime: RuntimeAPIEmulator, process: ChildProcess) {
        self.runtime = runtime
        self.process = process
    }

    /// The environment Lambda gives a function, for `table`'s store, plus `extra`.
    static func environment(table: MotoTable, runtime: RuntimeAPIEmulator, extra: [String: String]) -> [String: String] {
        var environment = MotoTable.awsEnvironment(home: table.directory)
        environment["AWS_LAMBDA_RUNTIME_API"] = runtime.address
        environment["AWS_LAMBDA_FUNCTION_NAME"] = "discfg"
        environment["AWS_LAMBDA_FUNCTION_VERSION"] = "$LATEST"
        environment["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = "256"
        environment["AWS_LAMBDA_LOG_GROUP_NAME"] = "/aws/lambda/discfg"
        environment["AWS_LAMBDA_LOG_STREAM_NAME"] = "2026/01/01/[$LATEST]0123456789abcdef"
        environment["DISCFG_STORE"] = table.store
        environment["DISCFG_EVENTS_ENDPOINT"] = table.moto.endpoint.absoluteString
        // The gateway events' default caller administers everything, by name.
        environment["DISCFG_IAM_ROLES"] = "arn:aws:iam::123456789012:user/ci=admin"
        // The tests' webhook receivers listen on plain HTTP on loopback.
        environment["DISCFG_WEBHOOK_ALLOW"] = "http,private"
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Starts a Runtime API and `discfg lambda` against it.
    static func start(
        table: MotoTable, environment extra: [String: String] = [:], executable: URL = DiscfgCommand.executable, arguments: [String] = ["lambda"]
    ) async throws -> RunningLambda {
        let runtime = try await RuntimeAPIEmulator.start()
        do {
            let process = try ChildProcess.launch(
                executable.path, arguments, environment: environment(table: table, runtime: runtime, extra: extra)
            )
            return RunningLambda(runtime: runtime, process: process)
        } catch {
            await runtime.stop()
            throw error
        }
    }

    /// Invokes the function with `event` and returns the invocation.
    func invoke(_ event: Data, deadline: Duration = .seconds(30)) async throws -> RuntimeAPIEmulator.Invocation {
        do {
            return try await runtime.invocation(eventJSON: event, deadline: deadline)
        } catch {
            throw LambdaTestFailure("\(error)\n\(process.output.logs)")
        }
    }

    /// Invokes the function with an API Gateway or Function URL event and parses the answer.
    func request(_ event: Data, deadline: Duration = .seconds(30)) async throws -> (GatewayResponse, RuntimeAPIEmulator.Invocation) {
        let invocation = try await invoke(event, deadline: deadline)
        guard case .response(let data) = invocation.result else {
            throw LambdaTestFailure("the invocation failed: \(invocation.result)\n\(process.output.logs)")
        }
        return (try GatewayResponse(data), invocation)
    }

    /// Invokes the function and returns its JSON answer as an object.
    func respond(_ event: Data, deadline: Duration = .seconds(30)) async throws -> [String: Any] {
        let invocation = try await invoke(event, deadline: deadline)
        guard case .response(let data) = invocation.result,
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            throw LambdaTestFailure("expected a JSON object response, got \(invocation.result)\n\(process.output.logs)")
        }
        return object
    }

    /// The function's log lines for one invocation, once one matching `until` has been
    /// read (lines are written before the answer is posted, but reach this process
    /// through a pipe, so they may trail the answer by a moment); at most 30 s.
    func logLines(requestID: String, until: @escaping @Sendable (String) -> Bool) async -> [String] {
        // The match's type is spelled out: inferred, it was `[String]?`, so "no match yet"
        // came back as a match of nil and nothing was awaited.
        let found: [String]? = try? await process.waitForOutput(timeout: .seconds(30)) { (output) -> [String]? in
            let lines = Self.logLines(requestID: requestID, in: output)
            return lines.contains(where: until) ? lines : nil
        }
        return found ?? logLines(requestID: requestID)
    }

    /// The standard-output log lines that carry `requestID` in the documented format
    /// `<ISO time>\t<request id>\t<LEVEL>\t<message>`.
    func logLines(requestID: String) -> [String] {
        Self.logLines(requestID: requestID, in: process.output)
    }

    private static func logLines(requestID: String, in output: ChildProcess.Output) -> [String] {
        output.stdoutLines.filter { line in
            let parts = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
            return parts.count == 4 && parts[1] == requestID && TimestampFormat.date(from: String(parts[0])) != nil
                && ["TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL", "CRITICAL"].contains(parts[2].uppercased())
        }
    }

    func stop() async {
        await process.stop()
        await runtime.stop()
    }
}

/// Runs `body` with a fresh table and always removes its scratch files.
///
/// A moto answers one request at a time, so while tests run in parallel a call may wait
/// seconds for its turn. A test whose deadline is seconds long passes `ownServer` and gets
/// a moto of its own.
func withMotoTable<T>(ownServer: Bool = false, _ body: (MotoTable) async throws -> T) async throws -> T {
    if ownServer {
        return try await withMotoServer { moto in
            let table = try await MotoTable.create(on: moto)
            defer { table.cleanUp() }
            return try await body(table)
        }
    }
    let table = try await MotoTable.create()
    defer { table.cleanUp() }
    return try await body(table)
}

/// Runs `body` with `discfg lambda` started against `table`, and always stops it.
func withLambda<T>(
    _ table: MotoTable, environment: [String: String] = [:], _ body: (RunningLambda) async throws -> T
) async throws -> T {
    let lambda = try await RunningLambda.start(table: table, environment: environment)
    do {
        let result = try await body(lambda)
        let violations = await lambda.runtime.protocolViolations
        #expect(violations.isEmpty, "Runtime API protocol violations: \(violations)")
        await lambda.stop()
        return result
    } catch {
        await lambda.stop()
        throw error
    }
}
