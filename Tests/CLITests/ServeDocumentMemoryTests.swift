import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A document read (`GET …?document`) holds about its text, not its parsed tree, and only a
/// few are built at once, so concurrent reads of a large prefix cannot take `serve`'s memory:
/// the values are written out one by one as JSON text within a 16 MiB budget, never held
/// parsed together (a parsed JSON value takes some 50 times its text).
@Suite("CLI: serve memory under document reads")
struct ServeDocumentMemoryTests {
    /// The bound on the server's peak resident memory (VmHWM) after three concurrent reads
    /// of a 15 MiB document of small numbers. Measured on Linux x86-64 with a debug build:
    /// 1,579 MiB when each read built the document parsed, and all three at once; 154 MiB
    /// written as text, two at a time.
    static let peakRSSBound = 600 * 1024 * 1024

    /// A JSON array of ones just under 256 KiB: 131,071 numbers, each parsed into a value
    /// of its own.
    static let numbers = Data(("[" + Array(repeating: "1", count: 131_071).joined(separator: ",") + "]").utf8)

    /// The text of the document: `{`, 60 members `"kNN":[…]` with 59 commas between, `}`
    /// and a newline.
    static let documentBytes: Int = {
        let member = #""k10":"#.utf8.count + numbers.count
        return 60 * member + 59 + 3
    }()

    @Test("three concurrent reads of a 15 MiB document are answered whole, and serve's peak RSS stays bounded", .timeLimit(.minutes(5)))
    func concurrentReads() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        // The reads are about memory, not the deadline: a debug build on a loaded machine
        // may take past the default 30 s to write 45 MiB two documents at a time.
        let (server, port) = try await cli.serve(["--request-timeout", "600"])
        try await withServer(server) { server in
            #expect(try await LoopbackHTTP.exchange(port: port, "PUT /v1/m", body: Data()).hasPrefix("HTTP/1.1 201"))
            // 60 JSON values of 256 KiB: 15 MiB of text, 7.8 million numbers.
            for index in 0..<60 {
                let reply = try await LoopbackHTTP.exchange(port: port, "PUT /v1/m/keys/doc/k\(index + 10)", body: Self.numbers, headers: ["Content-Type: application/json"])
                try #require(reply.hasPrefix("HTTP/1.1 201"), "write \(index) answered \(reply.prefix(200))")
            }
            let replies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<3 {
                    // The third read waits for one of the first two to end, longer than a
                    // minute on a loaded machine: the read may be silent up to the test's limit.
                    group.addTask { try await LoopbackHTTP.exchange(port: port, "GET /v1/m/keys/doc/?document", body: Data(), waiting: 270) }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            for reply in replies {
                #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply.prefix(300))")
                let body = reply.split(separator: "\r\n\r\n", maxSplits: 1).last ?? ""
                #expect(body.hasPrefix(#"{"k10":[1,1,1"#) && body.hasSuffix("1]}\n"), "\(body.prefix(40))…\(body.suffix(40))")
                #expect(body.utf8.count == Self.documentBytes, "the whole document: \(body.utf8.count) bytes")
            }

            let status = try String(contentsOfFile: "/proc/\(server.pid)/status", encoding: .utf8)
            let peak = try #require(ServeMemoryTests.kilobytes("VmHWM", in: status)) * 1024
            print("serve after three concurrent reads of a 15 MiB document: peak RSS \(peak / 1_048_576) MiB")
            #expect(peak < Self.peakRSSBound, "peak RSS \(peak) bytes")
            #expect(server.isRunning)
        }
    }

    @Test("a document whose JSON text passes 16 MiB is refused with 413 naming the limit, though its values hold less", .timeLimit(.minutes(3)))
    func textBudget() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        // The reads are about memory, not the deadline: a debug build on a loaded machine
        // may take past the default 30 s to write 45 MiB two documents at a time.
        let (server, port) = try await cli.serve(["--request-timeout", "600"])
        try await withServer(server) { server in
            #expect(try await LoopbackHTTP.exchange(port: port, "PUT /v1/m", body: Data()).hasPrefix("HTTP/1.1 201"))
            // 12 text values of 256 KiB of a control character: 3 MiB of values, each byte
            // written as `\u0001`, 18 MiB of JSON text; half of them under /doc/a/, half under /doc/b/.
            let control = Data(repeating: 1, count: Limits.maxValueBytes)
            for index in 0..<12 {
                let key = "/doc/\(index < 6 ? "a" : "b")/k\(index + 10)"
                let reply = try await LoopbackHTTP.exchange(port: port, "PUT /v1/m/keys\(key)", body: control, headers: ["Content-Type: text/plain"])
                try #require(reply.hasPrefix("HTTP/1.1 201"), "write \(index) answered \(reply.prefix(200))")
            }
            let refused = try await LoopbackHTTP.exchange(port: port, "GET /v1/m/keys/doc/?document", body: Data())
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused.prefix(300))")
            #expect(refused.contains(#""code":"tooLarge""#) && refused.contains("16 MiB") && refused.contains("narrower prefix"), "\(refused.suffix(400))")
            #expect(refused.utf8.count < 4096, "the refusal is small: \(refused.utf8.count) bytes")
            // A narrower prefix, 9 MiB of text, is answered.
            let narrower = try await LoopbackHTTP.exchange(port: port, "GET /v1/m/keys/doc/a/?document", body: Data())
            #expect(narrower.hasPrefix("HTTP/1.1 200"), "\(narrower.prefix(300))")
            #expect(narrower.hasSuffix(#"\u0001"}"# + "\n"), "\(narrower.suffix(40))")
            #expect(server.isRunning)
        }
    }
}
