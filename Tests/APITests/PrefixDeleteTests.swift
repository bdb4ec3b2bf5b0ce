import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A recursive delete removes what it names and nothing else; a whole config is emptied
/// only when `/` is named.
@Suite("API: prefix deletes touch only their prefix")
struct PrefixDeleteTests {
    @Test("?prefix= on keys, and the path on keys/{prefix}, each delete only that prefix; prefix=/ empties the config")
    func scoped() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            for key in ["tmp/a", "tmp/b/c", "tmpx", "keep/1", "keep/2", "other/tmp"] {
                #expect(try await server.put("/v1/c/keys/\(key)", "v").status == 201)
            }
            func keys() async throws -> [String] {
                try await server.get("/v1/c/keys?recursive").envelope().items?.map(\.key) ?? []
            }
            let byQuery = try await server.request(.DELETE, "/v1/c/keys?prefix=/tmp&recursive")
            #expect(byQuery.status == 200, "\(byQuery.text)")
            #expect(try byQuery.envelope().events?.map(\.key) == ["/tmp/a", "/tmp/b/c"])
            #expect(try await keys() == ["/keep/1", "/keep/2", "/other/tmp", "/tmpx"])

            let byPath = try await server.request(.DELETE, "/v1/c/keys/keep?recursive")
            #expect(byPath.status == 200, "\(byPath.text)")
            #expect(try byPath.envelope().events?.map(\.key) == ["/keep/1", "/keep/2"])
            #expect(try await keys() == ["/other/tmp", "/tmpx"])

            #expect(try await server.request(.DELETE, "/v1/c/keys?recursive=true").status == 400)
            #expect(try await keys() == ["/other/tmp", "/tmpx"])

            let all = try await server.request(.DELETE, "/v1/c/keys?prefix=/&recursive")
            #expect(try all.envelope().events?.count == 2)
            #expect(try await keys().isEmpty)
        }
    }
}
