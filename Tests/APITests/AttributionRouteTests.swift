@testable import DiscfgAPI
import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

@Suite("API: every change records who and why")
struct AttributionRouteTests {
    static let message = "move to the new primary ✓ 100%"
    static let encoded = "move to the new primary %E2%9C%93 100%25"
    /// Headers a client might send to claim to be someone; none is read.
    static let forged = [
        ("Discfg-Principal", "token:ffffffffffff"), ("Discfg-By", "admin"), ("X-Discfg-User", "root"), ("X-Forwarded-User", "root"),
        ("X-Amzn-Oidc-Identity", "arn:aws:iam::1:root"), ("X-Client-Cert-Subject", "CN=root"),
    ]

    @Test("a change records the token the server authenticated and the Discfg-Message header, on the router and the event loop's write; headers and bodies cannot claim another principal")
    func tokenAndMessage() async throws {
        try await withServer(try await LiveServer.start(auth: .required)) { server in
            let (token, record) = try TokenFormat.generate(role: .admin, configs: nil, description: "ops-admin", now: Date())
            try await server.store.saveToken(record)
            let bearer = ("Authorization", "Bearer \(token)")
            let who = Principal(kind: .token, id: record.id, description: "ops-admin")
            #expect(try await server.put("/v1/app", "", headers: [bearer]).status == 201)
            // The first write is routed while the token is not cached; later ones may be the event loop's.
            for round in 1...3 {
                let put = try await server.put("/v1/app/keys/db/host", "db\(round)", headers: [bearer, ("Discfg-Message", Self.encoded)] + Self.forged)
                #expect([200, 201].contains(put.status))
                #expect(try put.envelope().by == who)
                #expect(try put.envelope().message == Self.message)
            }
            let history = try await server.get("/v1/app/history/db/host", headers: [bearer]).envelope()
            #expect(history.events?.map(\.by) == [who, who, who])
            #expect(history.events?.map(\.message) == [Self.message, Self.message, Self.message])

            let json = ("Content-Type", "application/json")
            let documented = #"{"success": [{"op": "put", "key": "/b", "value": "x"}], "message": "from the document"}"#
            #expect(try await server.request(.POST, "/v1/app/txn", body: Data(documented.utf8), headers: [bearer, json]).status == 200)
            #expect(try await server.request(.POST, "/v1/app/txn", body: Data(documented.utf8), headers: [bearer, json, ("Discfg-Message", "the header wins")]).status == 200)
            let b = try await server.get("/v1/app/history/b", headers: [bearer]).envelope()
            #expect(b.events?.map(\.message) == ["the header wins", "from the document"])
            #expect(b.events?.map(\.by) == [who, who])
            let claimed = #"{"success": [{"op": "put", "key": "/b", "value": "y"}], "by": {"kind": "token", "id": "ffffffffffff"}}"#
            let refused = try await server.request(.POST, "/v1/app/txn", body: Data(claimed.utf8), headers: [bearer, json])
            #expect(refused.status == 400)

            let log = try await server.store.changeLog(in: try ConfigName("app"), ChangeLogQuery(by: "ffffffffffff"))
            #expect(log.isEmpty)
        }
    }

    @Test("a message past 1 KiB, or one that is not percent-encoded UTF-8, is refused on every write path and changes nothing")
    func badMessagesChangeNothing() async throws {
        try await withServer(try await LiveServer.start()) { server in
            #expect(try await server.put("/v1/app", "").status == 201)
            #expect(try await server.put("/v1/app/keys/k", "v1").status == 201)
            for round in 1...3 {
                let long = try await server.put("/v1/app/keys/k", "v\(round + 1)", headers: [("Discfg-Message", String(repeating: "a", count: Attribution.maxMessageBytes + 1))])
                #expect(long.status == 413)
                #expect(try long.envelope().error?.field == "message")
                let malformed = try await server.put("/v1/app/keys/k", "v\(round + 1)", headers: [("Discfg-Message", "50%ZZ")])
                #expect(malformed.status == 400)
                #expect(try malformed.envelope().error?.field == "message")
            }
            let history = try await server.get("/v1/app/history/k").envelope()
            #expect(history.events?.map(\.item?.value) == ["v1"])
            // An open server's caller is anonymous, never a name it was told.
            #expect(history.events?.first?.by == Principal(kind: .anonymous, id: "anonymous"))
            let exactly = String(repeating: "m", count: Attribution.maxMessageBytes)
            #expect(try await server.put("/v1/app/keys/k", "v2", headers: [("Discfg-Message", exactly)]).status == 200)
            #expect(try await server.get("/v1/app/history/k").envelope().events?.first?.message == exactly)
        }
    }
}
