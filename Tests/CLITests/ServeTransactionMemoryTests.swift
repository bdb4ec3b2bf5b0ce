import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A REST transaction's reads share one page's budget, so one small request cannot make
/// `serve` build an answer of hundreds of megabytes (issue 33: 128 reads of `/` over 8 MiB
/// of values, 3.8 KB sent, answered 1 GiB of JSON and peaked at 4.5 GiB).
@Suite("CLI: serve memory under transactions that read everything")
struct ServeTransactionMemoryTests {
    /// The bound on the server's peak resident memory (VmHWM). Measured on Linux x86-64
    /// with a debug build: 58 MiB with the budget; without it (before issue 33) the same
    /// run answered 268,559,207 bytes of JSON and peaked at 1,080 MiB.
    static let peakRSSBound = 160 * 1024 * 1024

    @Test("32 reads of / over 8 MiB of values in one request are refused with 413 naming the 4 MiB budget; serve's peak RSS stays bounded", .timeLimit(.minutes(3)))
    func wholeKeyspaceReads() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve()
        try await withServer(server) { server in
            #expect(try await LoopbackHTTP.exchange(port: port, "PUT /v1/m", body: Data()).hasPrefix("HTTP/1.1 201"))
            // 32 values of 256 KiB: 8 MiB.
            let value = Data(repeating: UInt8(ascii: "v"), count: Limits.maxValueBytes)
            for index in 0..<32 {
                let reply = try await LoopbackHTTP.exchange(port: port, "PUT /v1/m/keys/k\(index + 10)", body: value)
                try #require(reply.hasPrefix("HTTP/1.1 201"), "write \(index) answered \(reply.prefix(200))")
            }
            let small = try await LoopbackHTTP.exchange(port: port, "PUT /v1/m/keys/small", body: Data("s".utf8))
            #expect(small.hasPrefix("HTTP/1.1 201"))

            // 32 reads of everything, and a write the refusal must undo: 256 MiB of values asked for in 1.4 KB.
            let reads = Array(repeating: #"{"op": "get", "prefix": "/"}"#, count: 32).joined(separator: ", ")
            let body = Data(#"{"success": [{"op": "put", "key": "/written", "value": "x"}, \#(reads)]}"#.utf8)
            let refused = try await LoopbackHTTP.exchange(port: port, "POST /v1/m/txn", body: body, headers: ["Content-Type: application/json"])
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused.prefix(300))")
            #expect(refused.contains(#""code":"tooLarge""#) && refused.contains(String(Limits.maxPageBytes)), "\(refused.suffix(400))")
            #expect(refused.utf8.count < 4096, "the refusal is small: \(refused.utf8.count) bytes")
            let written = try await LoopbackHTTP.exchange(port: port, "GET /v1/m/keys/written", body: Data())
            #expect(written.hasPrefix("HTTP/1.1 404"), "the refused transaction wrote nothing")

            // Within the budget, reads share it and are answered whole.
            let fitting = Data(#"{"success": [{"op": "get", "prefix": "/small"}, {"op": "get", "key": "/k10"}, {"op": "get", "key": "/k11"}]}"#.utf8)
            let answered = try await LoopbackHTTP.exchange(port: port, "POST /v1/m/txn", body: fitting, headers: ["Content-Type: application/json"])
            #expect(answered.hasPrefix("HTTP/1.1 200"), "\(answered.prefix(300))")

            let status = try String(contentsOfFile: "/proc/\(server.pid)/status", encoding: .utf8)
            let peak = try #require(ServeMemoryTests.kilobytes("VmHWM", in: status)) * 1024
            print("serve after a transaction of 32 reads of / over 8 MiB: peak RSS \(peak / 1_048_576) MiB")
            #expect(peak < Self.peakRSSBound, "peak RSS \(peak) bytes")
            #expect(server.isRunning)
        }
    }
}
