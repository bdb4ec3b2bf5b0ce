import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `discfg serve` holds bounded memory however slowly its watchers read.
@Suite("CLI: serve memory under slow watchers")
struct ServeMemoryTests {
    /// The bound on the server's peak resident memory (VmHWM). Measured on Linux x86-64
    /// with a debug build: 95 MiB; with a backlog too large to bind
    /// (`--stream-backlog 1048576`, as streams were before they were bounded) the same run
    /// reaches 613 MiB.
    static let peakRSSBound = 160 * 1024 * 1024

    @Test("100 event-stream readers that never read, and 1,000 writes, keep serve's peak RSS bounded", .timeLimit(.minutes(3)))
    func slowReaders() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve(["--stream-backlog", "256"])
        try await withServer(server) { server in
            #expect(try await LoopbackHTTP.exchange(port: port, "PUT /v1/m", body: Data()).hasPrefix("HTTP/1.1 201"))

            var readers: [LoopbackHTTP] = []
            defer { readers.forEach { $0.close() } }
            for _ in 0..<100 {
                let reader = try LoopbackHTTP(port: port, receiveBuffer: 4096)
                try reader.send(Data("GET /v1/m/watch?fromRevision=1&heartbeat=3600 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8))
                readers.append(reader)
            }
            // 1,000 changes of 8 KiB: 8 MB of events for each reader, 800 MB for all.
            let value = Data(String(repeating: "v", count: 8 * 1024).utf8)
            for index in 0..<1000 {
                let reply = try await LoopbackHTTP.exchange(port: port, "PUT /v1/m/keys/k\(index)", body: value)
                if !reply.hasPrefix("HTTP/1.1 201") {
                    Issue.record("write \(index) answered \(reply.prefix(200))")
                    break
                }
            }
            try await Task.sleep(for: .seconds(2))
            let status = try String(contentsOfFile: "/proc/\(server.pid)/status", encoding: .utf8)
            let peak = try #require(Self.kilobytes("VmHWM", in: status)) * 1024
            let now = try #require(Self.kilobytes("VmRSS", in: status)) * 1024
            print("serve with 100 slow readers after 1,000 writes of 8 KiB: peak RSS \(peak / 1_048_576) MiB, now \(now / 1_048_576) MiB")
            #expect(peak < Self.peakRSSBound, "peak RSS \(peak) bytes")
            #expect(server.isRunning)
        }
    }

    /// A `/proc/PID/status` field in kB.
    static func kilobytes(_ field: String, in status: String) -> Int? {
        status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            .flatMap { $0.split(separator: " ").dropFirst().first }
            .flatMap { Int($0) }
    }
}

