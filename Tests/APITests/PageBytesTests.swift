import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Pages are capped by the bytes of their values as well as by count.
@Suite("API: pages capped by bytes")
struct PageBytesTests {
    /// Three values fit a page, the fourth does not.
    static let value = String(repeating: "v", count: 100 * 1024)

    private func server() async throws -> LiveServer {
        let server = try await LiveServer.start { $0.api.maxPageBytes = 350 * 1024 }
        _ = try await server.put("/v1/c", "")
        return server
    }

    @Test("a listing of large values is cut short with a cursor, and the cursors reach every key once")
    func listing() async throws {
        try await withServer(try await server()) { server in
            for index in 1...7 { _ = try await server.put("/v1/c/keys/big/k\(index)", Self.value) }
            _ = try await server.put("/v1/c/keys/small/a", "x")
            var keys: [String] = []
            var pages: [Int] = []
            var cursor: String?
            repeat {
                let query = cursor.map { "&cursor=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
                let page = try await server.get("/v1/c/keys?recursive&limit=1000" + query).envelope()
                keys += page.items?.map(\.key) ?? []
                pages.append(page.items?.count ?? 0)
                cursor = page.cursor
            } while cursor != nil && pages.count < 20
            #expect(pages == [3, 3, 2])
            #expect(keys == (1...7).map { "/big/k\($0)" } + ["/small/a"])

            // Folders of a non-recursive listing stay in key order across the cut.
            let top = try await server.get("/v1/c/keys?prefix=/big/&limit=1000").envelope()
            #expect(top.items?.count == 3)
        }
    }

    @Test("a key's history is cut short with a cursor to the older events")
    func history() async throws {
        try await withServer(try await server()) { server in
            for _ in 1...5 { _ = try await server.put("/v1/c/keys/k", Self.value) }
            // Each event holds the new value and the previous one: one event per page.
            let first = try await server.get("/v1/c/history/k?limit=1000").envelope()
            #expect(first.events?.map(\.revision) == [5])
            #expect(first.cursor == "5")
            let second = try await server.get("/v1/c/history/k?limit=1000&before=5").envelope()
            #expect(second.events?.map(\.revision) == [4])
        }
    }

    @Test("a long poll is cut short and its revision continues after the last event")
    func longPoll() async throws {
        try await withServer(try await server()) { server in
            for index in 1...5 { _ = try await server.put("/v1/c/keys/k\(index)", Self.value) }
            let first = try await server.get("/v1/c/watch?fromRevision=1&limit=1000").envelope()
            #expect(first.events?.map(\.revision) == [1, 2, 3])
            #expect(first.revision == 3)
            let second = try await server.get("/v1/c/watch?fromRevision=4&limit=1000").envelope()
            #expect(second.events?.map(\.revision) == [4, 5])
            #expect(second.revision == 5)
        }
    }

    @Test("a request's maxBytes asks for smaller pages, and never for more than the server's budget")
    func requestedBudget() async throws {
        try await withServer(try await server()) { server in
            for index in 1...4 { _ = try await server.put("/v1/c/keys/k\(index)", String(repeating: "v", count: 1000)) }
            let small = try await server.get("/v1/c/keys?recursive&maxBytes=2100").envelope()
            #expect(small.items?.map(\.key) == ["/k1", "/k2"])
            #expect(small.cursor == "/k2")
            let history = try await server.get("/v1/c/history/k1?maxBytes=1").envelope()
            #expect(history.events?.count == 1)
            let poll = try await server.get("/v1/c/watch?fromRevision=1&maxBytes=1").envelope()
            #expect(poll.events?.map(\.revision) == [1])
            #expect(poll.revision == 1)
            for index in 1...4 { _ = try await server.put("/v1/c/keys/k\(index)", Self.value) }
            let capped = try await server.get("/v1/c/keys?recursive&maxBytes=100000000").envelope()
            #expect(capped.items?.count == 3, "the server's 350 KiB budget still applies")
            let refused = try await server.get("/v1/c/keys?recursive&maxBytes=0")
            #expect(refused.status == 400)
            #expect(try refused.envelope().error?.field == "maxBytes")
        }
    }

    @Test("a single value larger than the budget still makes a page of one")
    func oneAtLeast() async throws {
        try await withServer(try await LiveServer.start { $0.api.maxPageBytes = 1024 }) { server in
            _ = try await server.put("/v1/c", "")
            for index in 1...2 { _ = try await server.put("/v1/c/keys/k\(index)", Self.value) }
            let page = try await server.get("/v1/c/keys?recursive").envelope()
            #expect(page.items?.map(\.key) == ["/k1"])
            #expect(page.cursor == "/k1")
        }
    }
}
