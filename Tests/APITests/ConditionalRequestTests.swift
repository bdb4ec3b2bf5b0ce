import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("API: compare-and-swap over HTTP")
struct ConditionalRequestTests {
    @Test("If-Match, If-None-Match, prevValue, prevVersion, prevIndex, prevExist: 412 carries the current item and changes nothing")
    func conditions() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            #expect(try await server.put("/v1/c/keys/k", "v1", headers: [("If-None-Match", "*")]).status == 201)
            let refused = try await server.put("/v1/c/keys/k", "v2", headers: [("If-None-Match", "*")])
            #expect(refused.status == 412)
            #expect(try refused.envelope().error?.code == .conditionFailed)
            #expect(try refused.envelope().item?.value == "v1")
            #expect(refused.headers["ETag"].first == "\"1\"")

            #expect(try await server.put("/v1/c/keys/k", "v2", headers: [("If-Match", "\"7\"")]).status == 412)
            #expect(try await server.put("/v1/c/keys/k", "v2", headers: [("If-Match", "\"1\"")]).status == 200)
            #expect(try await server.put("/v1/c/keys/k", "v3", headers: [("If-Match", "W/\"2\"")]).status == 200)
            #expect(try await server.put("/v1/c/keys/k?prevValue=nope", "v4").status == 412)
            #expect(try await server.put("/v1/c/keys/k?prevValue=v3", "v4").status == 200)
            #expect(try await server.put("/v1/c/keys/k?prevVersion=1", "v5").status == 412)
            #expect(try await server.put("/v1/c/keys/k?prevVersion=4", "v5").status == 200)
            #expect(try await server.put("/v1/c/keys/k?prevIndex=5", "v6").status == 200)
            #expect(try await server.put("/v1/c/keys/k?prevExist=false", "v7").status == 412)
            #expect(try await server.put("/v1/c/keys/other", "x", headers: [("If-Match", "*")]).status == 412)
            #expect(try await server.request(.DELETE, "/v1/c/keys/k?prevVersion=1").status == 412)

            let info = try await server.get("/v1/c").envelope()
            #expect(info.revision == 6)
            #expect(try await server.get("/v1/c/keys/k").envelope().item?.value == "v6")
            #expect(try await server.request(.DELETE, "/v1/c/keys/k", headers: [("If-Match", "\"6\"")]).status == 200)
        }
    }

    @Test("concurrent compare-and-swap writers through the API lose no update")
    func concurrentIncrements() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            let writers = 6
            let increments = 15
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<writers {
                    group.addTask {
                        var conflicts = 0
                        for _ in 0..<increments {
                            while true {
                                let current = try await server.get("/v1/c/keys/counter")
                                let (value, header): (Int, (String, String)) = if current.status == 404 {
                                    (0, ("If-None-Match", "*"))
                                } else {
                                    (Int(try current.envelope().item!.value)!, ("If-Match", current.headers["ETag"].first!))
                                }
                                let reply = try await server.put("/v1/c/keys/counter", String(value + 1), headers: [header])
                                if reply.status == 412 { conflicts += 1; continue }
                                #expect(reply.status == 200 || reply.status == 201)
                                break
                            }
                        }
                        return conflicts
                    }
                }
                for try await _ in group {}
            }
            let final = try await server.get("/v1/c/keys/counter").envelope().item
            #expect(final?.value == String(writers * increments))
            #expect(final?.version == UInt64(writers * increments))
        }
    }
}
