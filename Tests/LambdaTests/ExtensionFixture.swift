import AsyncHTTPClient
import DiscfgTestSupport
import Foundation
import NIOCore

/// The real `discfg` binary started as a layer's extension would be, under the name
/// `discfg-agent` (a link in a scratch folder, so its argv[0] is that name and it gets no
/// arguments), against an in-process Extensions API emulator.
final class RunningExtension: Sendable {
    let api: ExtensionsAPIEmulator
    let process: ChildProcess
    /// The loopback port the agent serves (`DISCFG_AGENT_PORT`).
    let port: Int
    /// The scratch folder holding the link and, unless the test names another, the cache.
    let directory: URL

    private init(api: ExtensionsAPIEmulator, process: ChildProcess, port: Int, directory: URL) {
        self.api = api
        self.process = process
        self.port = port
        self.directory = directory
    }

    /// Starts the emulator and the extension with `environment` (the store, the configs …)
    /// plus the Lambda variables, a free port and a scratch cache folder.
    /// With `arguments`, the binary is started as `discfg` with them instead.
    static func start(
        environment extra: [String: String], api given: ExtensionsAPIEmulator? = nil, arguments: [String]? = nil
    ) async throws -> RunningExtension {
        let api: ExtensionsAPIEmulator
        if let given { api = given } else { api = try await ExtensionsAPIEmulator.start() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-extension-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let link = directory.appendingPathComponent("discfg-agent")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: DiscfgCommand.executable)
        let port = try MotoServer.freeLoopbackPort()
        var environment = MotoTable.awsEnvironment(home: directory)
        environment["AWS_LAMBDA_RUNTIME_API"] = api.address
        environment["AWS_LAMBDA_FUNCTION_NAME"] = "discfg-test"
        environment["DISCFG_AGENT_PORT"] = String(port)
        environment["DISCFG_AGENT_CACHE_DIR"] = directory.appendingPathComponent("cache").path
        environment.merge(extra) { _, new in new }
        do {
            let process = try ChildProcess.launch(arguments == nil ? link.path : DiscfgCommand.executable.path, arguments ?? [], environment: environment)
            return RunningExtension(api: api, process: process, port: port, directory: directory)
        } catch {
            await api.stop()
            throw error
        }
    }

    /// `GET http://127.0.0.1:PORT/path` on the agent: the status and body.
    func get(_ path: String) async throws -> (status: Int, body: String) {
        let (status, _, body) = try await getWithHeaders(path)
        return (status, body)
    }

    /// `GET http://127.0.0.1:PORT/path` on the agent: the status, headers (by lowercased
    /// name, the first of each) and body.
    func getWithHeaders(_ path: String) async throws -> (status: Int, headers: [String: String], body: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let headers = Dictionary(response.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        return (Int(response.status.code), headers, String(buffer: body))
    }

    /// The value of `key` in `config` as the agent serves it, or nil when it answers otherwise.
    func read(_ config: String, _ key: String) async throws -> String? {
        let (status, body) = try await get("/v1/\(config)/keys\(key)?raw")
        return status == 200 ? body : nil
    }

    /// Waits for the process to end; its exit status, or nil if it is still running after `timeout`.
    func exitStatus(within timeout: Duration) async -> Int32? {
        await process.termination(within: timeout)?.status
    }

    func stop() async {
        await process.stop()
        await api.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with the extension started, and always stops it.
func withExtension<T>(
    environment: [String: String], api: ExtensionsAPIEmulator? = nil, arguments: [String]? = nil, _ body: (RunningExtension) async throws -> T
) async throws -> T {
    let running = try await RunningExtension.start(environment: environment, api: api, arguments: arguments)
    do {
        let result = try await body(running)
        await running.stop()
        return result
    } catch {
        let logs = running.process.output.logs
        await running.stop()
        throw LambdaTestFailure("\(error)\n\(logs)")
    }
}
