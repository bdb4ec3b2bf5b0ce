import DiscfgCore
import Foundation
import Testing

/// `discfg serve --max-connections`: connections over the cap wait to be accepted.
@Suite("CLI: serve connection cap")
struct ServeConnectionCapTests {
    @Test("with --max-connections 1, a second connection is served only once the first closes", .timeLimit(.minutes(1)))
    func secondConnectionWaits() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await ServeTests.start(cli, ["--max-connections", "1"])
        defer { if server.isRunning { server.terminate() } }
        let healthz = Data("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)

        let first = try LoopbackHTTP(port: port)
        try first.send(healthz)
        #expect(first.read(waiting: 10).hasPrefix("HTTP/1.1 200"), "the first connection is served and kept alive")

        let second = try LoopbackHTTP(port: port)
        defer { second.close() }
        try second.send(healthz)
        #expect(second.read(waiting: 1) == "", "not served while the first connection is open")
        first.close()
        #expect(second.read(waiting: 10).hasPrefix("HTTP/1.1 200"), "served once the first closed")
    }
}
