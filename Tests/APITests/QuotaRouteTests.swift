import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// A config's quota over HTTP: set and removed in its settings, and a write past it
/// answered 507 (`quotaExceeded`) on the router and on the event loop alike.
@Suite("API: config quotas")
struct QuotaRouteTests {
    @Test("writes past quotaBytes are 507 on both paths and change nothing; 0 removes the quota, null keeps it; a bad quota is 400")
    func quota() async throws {
        try await withServer(try await LiveServer.start()) { server in
            let created = try await server.request(.PUT, "/v1/q", body: Data(#"{"quotaBytes": 100}"#.utf8))
            #expect(created.status == 201)
            #expect(try created.envelope().configInfo?.settings.quotaBytes == 100)
            let value = String(repeating: "v", count: 90)
            #expect(try await server.put("/v1/q/keys/a", value).status == 201)

            // A plain PUT (the event loop takes it) and a conditional one (the router).
            for headers in [[], [("If-None-Match", "*")]] {
                let refused = try await server.put("/v1/q/keys/b", value, headers: headers)
                #expect(refused.status == 507, "\(headers): \(refused.text)")
                #expect(try refused.envelope().error?.code == .quotaExceeded)
                #expect(refused.text.contains("100") && refused.text.contains("184"), "\(refused.text)")
            }
            let txn = try await server.request(.POST, "/v1/q/txn", body: Data(#"{"success": [{"op": "put", "key": "/c", "value": "\#(value)"}]}"#.utf8))
            #expect(txn.status == 507, "\(txn.text)")
            let info = try await server.get("/v1/q").envelope().configInfo
            #expect(info?.byteCount == 92 && info?.keyCount == 1)
            #expect(try await server.put("/v1/q/keys/a", "smaller").status == 200, "a change that shrinks passes")

            let kept = try await server.request(.PATCH, "/v1/q", body: Data(#"{"quotaBytes": null, "description": "d"}"#.utf8))
            #expect(try kept.envelope().configInfo?.settings.quotaBytes == 100, "null keeps it")
            for bad in ["-1", "1.5", "\"1KiB\"", "18446744073709551616", "1125899906842625"] {
                let reply = try await server.request(.PATCH, "/v1/q", body: Data(#"{"quotaBytes": \#(bad)}"#.utf8))
                #expect(reply.status == 400, "\(bad): \(reply.text)")
                #expect(try reply.envelope().error?.field == "quotaBytes", "\(bad): \(reply.text)")
            }
            let removed = try await server.request(.PATCH, "/v1/q", body: Data(#"{"quotaBytes": 0}"#.utf8))
            #expect(try removed.envelope().configInfo?.settings.quotaBytes == nil)
            #expect(try await server.put("/v1/q/keys/b", value).status == 201)
        }
    }
}
