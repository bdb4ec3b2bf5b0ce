import DiscfgAPI
import DiscfgClient
import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// The keys under a prefix as one JSON document over a live server: read now or at a past
/// revision, written in one change, merged or replacing.
@Suite("API: JSON values — a prefix as one document")
struct JSONRoutesDocumentTests {
    static let json = [("Content-Type", "application/json")]

    /// The config `c` with keys of every kind under `/app/`, and one outside it; at revision 5.
    static func fill(_ server: LiveServer) async throws {
        _ = try await server.put("/v1/c", "")
        _ = try await server.put("/v1/c/keys/app/db/host", "db1", headers: [("Content-Type", "text/plain")])
        _ = try await server.put("/v1/c/keys/app/db/port", "5432", headers: Self.json)
        _ = try await server.put("/v1/c/keys/app/name", "svc")
        _ = try await server.request(.PUT, "/v1/c/keys/app/bin", body: Data([0xFF, 0xFE]))
        _ = try await server.put("/v1/c/keys/other", "x")
    }

    static let app = #"{"bin":{"$base64":"//4="},"db":{"host":"db1","port":5432},"name":"svc"}"#

    @Test("GET ?document: the keys under a prefix as one object, the revision it was read at in X-Discfg-Revision; the root; a past revision")
    func read() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            for path in ["/v1/c/keys/app?document", "/v1/c/keys/app/?document", "/v1/c/keys?document&prefix=/app/", "/v1/c/keys/app/?document=true"] {
                let reply = try await server.get(path)
                #expect(reply.status == 200, "\(path): \(reply.text)")
                #expect(reply.text == Self.app + "\n", "\(path)")
                #expect(reply.headers["Content-Type"].first == "application/json", "\(path)")
                #expect(reply.headers["X-Discfg-Revision"].first == "5", "\(path)")
            }
            let root = try await server.get("/v1/c/keys?document")
            #expect(root.text == #"{"app":\#(Self.app),"other":"x"}"# + "\n")
            #expect(try await server.get("/v1/c/keys/nothing/?document").text == "{}\n")

            _ = try await server.put("/v1/c/keys/app/name", "svc2")
            _ = try await server.request(.DELETE, "/v1/c/keys/app/bin")
            #expect(try await server.get("/v1/c/keys/app?document").text == #"{"db":{"host":"db1","port":5432},"name":"svc2"}"# + "\n")
            let past = try await server.get("/v1/c/keys/app?document&revision=4")
            #expect(past.status == 200 && past.headers["X-Discfg-Revision"].first == "4")
            #expect(past.text == Self.app + "\n")
            let beforeBin = try await server.get("/v1/c/keys?document&prefix=/app/&revision=3")
            #expect(beforeBin.text == #"{"db":{"host":"db1","port":5432},"name":"svc"}"# + "\n")
            #expect(try await server.get("/v1/c/keys/app?document&revision=99").status == 400)
            #expect(try await server.get("/v1/nope/keys/app?document").status == 404)
        }
    }

    @Test("GET ?document of keys that are also directories is 409 naming the path")
    func readConflict() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            _ = try await server.put("/v1/c/keys/x/y", "1")
            _ = try await server.put("/v1/c/keys/x/y/z", "2")
            let reply = try await server.get("/v1/c/keys/x?document")
            #expect(reply.status == 409)
            let error = try reply.envelope().error
            #expect(error?.code == .notRepresentable && error?.message.contains("/x/y") == true, "\(reply.text)")
            #expect(try await server.get("/v1/c/keys/x/y/?document").text == #"{"z":"2"}"# + "\n")
        }
    }

    @Test("PUT ?document writes the changed keys at one revision (events, unchanged); replace also deletes what it lacks; the root takes PUT keys?document")
    func write() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            let reply = try await server.put("/v1/c/keys/app/?document", #"{"db": {"port": 6000, "user": "app"}, "name": "svc", "new": [1]}"#, headers: Self.json)
            #expect(reply.status == 200, "\(reply.text)")
            let envelope = try reply.envelope()
            #expect(envelope.action == "document" && envelope.config == "c" && envelope.revision == Revision(6) && envelope.unchanged == 1)
            let events = envelope.events ?? []
            #expect(events.map(\.key) == ["/app/db/port", "/app/db/user", "/app/new"])
            #expect(events.allSatisfy { $0.revision == Revision(6) && $0.type == .put })
            #expect(events.map { $0.item?.value } == ["6000", "app", "[1]"])
            #expect(events.map { $0.item?.contentType } == ["application/json", nil, "application/json"])
            #expect(try await server.get("/v1/c/keys/app?document").text == #"{"bin":{"$base64":"//4="},"db":{"host":"db1","port":6000,"user":"app"},"name":"svc","new":[1]}"# + "\n")

            let same = try await server.put("/v1/c/keys/app?document", #"{"name": "svc"}"#)
            #expect(try same.envelope().events == [] && same.envelope().unchanged == 1 && same.envelope().revision == Revision(6))

            let replaced = try await server.put("/v1/c/keys/app?document&replace=true", #"{"name": "svc2"}"#)
            #expect(replaced.status == 200)
            let replacedEvents = try replaced.envelope().events ?? []
            #expect(replacedEvents.map(\.key) == ["/app/bin", "/app/db/host", "/app/db/port", "/app/db/user", "/app/name", "/app/new"])
            #expect(replacedEvents.map(\.type) == [.delete, .delete, .delete, .delete, .put, .delete])
            #expect(try await server.get("/v1/c/keys?document").text == #"{"app":{"name":"svc2"},"other":"x"}"# + "\n")

            let root = try await server.put("/v1/c/keys?document", #"{"top": {"level": true}, "other": "y"}"#)
            #expect(try root.status == 200 && (root.envelope().events?.map(\.key)) == ["/other", "/top/level"])
            #expect(try await server.get("/v1/c/keys/top/level?raw").text == "true")
            let noFlag = try await server.put("/v1/c/keys", #"{"a": 1}"#)
            #expect(try noFlag.status == 400 && (noFlag.envelope().error?.field) == "document")
        }
    }

    @Test("PUT ?document refuses, changing nothing: a body that is not an object or not JSON, a member that would be both key and directory, reserved names, more than the import limit")
    func writeRefusals() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            let refusals: [(body: String, status: Int, mentions: String)] = [
                ("[1]", 400, "object"),
                ("{", 400, "JSON"),
                (#"{"db": "flat"}"#, 400, "/app/db"),
                (#"{"a/b": 1}"#, 400, "a/b"),
                (#"{"": 1}"#, 400, "member"),
                (#"{"..": 1}"#, 400, "member"),
            ]
            for refusal in refusals {
                let reply = try await server.put("/v1/c/keys/app/?document", refusal.body, headers: Self.json)
                #expect(reply.status == refusal.status, "\(refusal.body): \(reply.text)")
                let error = try reply.envelope().error
                #expect(error?.field == "document", "\(refusal.body): \(reply.text)")
                #expect(error?.message.contains(refusal.mentions) == true, "\(refusal.body): \(reply.text)")
            }
            let reserved = try await server.put("/v1/c/keys?document", #"{".discfg": {"schema": {"x": "{}"}}}"#)
            #expect(try reserved.status == 400 && (reserved.envelope().error?.message.contains("reserved")) == true, "\(reserved.text)")
            let huge = try await server.put("/v1/c/keys/app/?document", #"{"v": ""# + String(repeating: "x", count: 17 * 1024 * 1024) + #""}"#)
            #expect(huge.status == 413)
            #expect(try await server.get("/v1/c/keys/app?document").text == Self.app + "\n")
            #expect(try await server.get("/v1/c").envelope().configInfo?.revision == Revision(5))
        }
    }

    @Test("RemoteStore writes and reads documents through the routes, the root included")
    func remote() async throws {
        try await withServer(try await LiveServer.start()) { server in
            try await Self.fill(server)
            let store = try RemoteStore(url: URL(string: server.baseURL)!, token: nil)
            let config = try ConfigName("c")
            let written = try await store.putDocument(try JSONParser.parse(#"{"db": {"port": 7000}}"#), under: try KeyPrefix("/app/"), in: config, replace: false)
            #expect(written.events.map(\.key.path) == ["/app/db/port"] && written.revision == Revision(6) && written.unchanged == 0)
            let (document, revision) = try await store.document(under: try KeyPrefix("/app/db/"), in: config)
            #expect(revision == Revision(6))
            #expect(try JSONSerializer.string(document, options: .init(sortKeys: true)) == #"{"host":"db1","port":7000}"#)
            let root = try await store.putDocument(try JSONParser.parse(#"{"other": "z"}"#), under: .root, in: config, replace: true)
            #expect(root.events.map(\.kind) == [.delete, .delete, .delete, .delete, .put])
            #expect(try await server.get("/v1/c/keys?document").text == #"{"other":"z"}"# + "\n")
        }
    }
}
