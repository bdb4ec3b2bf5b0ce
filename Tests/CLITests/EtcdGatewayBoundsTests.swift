import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The etcd API's JSON gateway under bad input, as the gRPC path is: a Txn's operations
/// are counted before it is decoded, and each request the gateway itself refuses has its
/// audit line.
@Suite("etcd API: the JSON gateway's bounds and refusals")
struct EtcdGatewayBoundsTests {
    /// `{"compare":[{},{},…]}` of about 4 MiB: 1.4 million empty compares.
    static let emptyCompares: Data = {
        let count = (4 << 20) / 3 - 8
        return Data((#"{"compare":["# + String(repeating: "{},", count: count) + "{}]}").utf8)
    }()

    @Test("a 4 MiB gateway Txn of empty compares is refused naming etcd's limit before it is decoded, without growing serve's peak RSS", .timeLimit(.minutes(3)))
    func txnDecode() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        try await withServer(etcd) { etcd in
            #expect(try await etcd.ok("put", "warm", "up") == "OK\n")
            let before = try EtcdBoundsTests.memory(etcd)
            for _ in 0..<3 {
                let reply = ServeBrowserGuardTests.Reply(try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /v3/kv/txn", body: Self.emptyCompares))
                #expect(reply.status == 400, "\(reply.status) \(reply.body.prefix(300))")
                #expect(reply.body == #"{"error":"etcdserver: too many operations in txn request","message":"etcdserver: too many operations in txn request","code":3}"#)
            }
            // 129 compares are one too many; 128 are served.
            let over = #"{"compare":["# + Array(repeating: #"{"key":"d2FybQ==","target":"VERSION","result":"GREATER"}"#, count: 129).joined(separator: ",") + "]}"
            #expect(ServeBrowserGuardTests.Reply(try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /v3/kv/txn", body: Data(over.utf8))).status == 400)
            let within = #"{"compare":["# + Array(repeating: #"{"key":"d2FybQ==","target":"VERSION","result":"GREATER"}"#, count: 128).joined(separator: ",") + "]}"
            let served = ServeBrowserGuardTests.Reply(try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /v3/kv/txn", body: Data(within.utf8)))
            #expect(served.status == 200, "\(served.body)")
            #expect(try served.object()["succeeded"] as? Bool == true, "\(served.body)")
            // A nested transaction is refused before its compares are decoded too.
            let nested = #"{"success":[{"request_txn":{"compare":["# + String(repeating: "{},", count: 100_000) + "{}]}}]}"
            let refused = ServeBrowserGuardTests.Reply(try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /v3/kv/txn", body: Data(nested.utf8)))
            #expect(refused.status == 400 && refused.body.contains("too many operations in txn request"), "\(refused.status) \(refused.body.prefix(300))")
            let after = try EtcdBoundsTests.memory(etcd)
            print("serve --etcd peak RSS before three 4 MiB gateway Txns \(before.peak) MiB, after \(after.peak) MiB (now \(after.now) MiB)")
            // The requests' own bytes, held while they arrive, and no decoded compares.
            #expect(after.peak - before.peak < 64)
        }
    }

    @Test("the gateway's own refusals (400, 403, 404, 405, 421) each leave an audit line naming the path, the method and the status")
    func refusalsAudited() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-gateway-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("audit.log")
        let etcd = try await EtcdPeer.start(.sqlite, ["--audit-log", file.path])
        try await withServer(etcd) { etcd in
            let port = etcd.etcdPort
            let requests: [(String, Data, [String], String?, Int)] = [
                ("POST /v3/kv/put", Data("{not json".utf8), [], nil, 400),
                ("POST /v3/kv/put", Data(#"{"key":"YQ=="}"#.utf8), ["Origin: https://evil.example"], nil, 403),
                ("POST /v3/kv/nothing", Data(), [], nil, 404),
                ("GET /v3/kv/put", Data(), [], nil, 405),
                ("POST /v3/kv/range", Data(#"{"key":"YQ=="}"#.utf8), [], "evil.example", 421),
            ]
            for (line, body, headers, host, status) in requests {
                let reply = ServeBrowserGuardTests.Reply(try await LoopbackHTTP.exchange(port: port, line, body: body, headers: headers, host: host))
                #expect(reply.status == status, "\(line): \(reply.status) \(reply.body)")
            }
            let lines = try await ServeAuditLogTests.lines(file, atLeast: requests.count)
            for (line, _, _, _, status) in requests {
                let parts = line.split(separator: " ").map(String.init)
                let noted = lines.first { $0["path"] as? String == parts[1] && $0["method"] as? String == parts[0] && $0["status"] as? Int == status }
                #expect(noted?["api"] as? String == "etcd" && noted?["principal"] is NSNull && noted?["config"] as? String == "etcd", "\(line) \(status): \(lines)")
            }
            let decoded = lines.first { $0["status"] as? Int == 400 }
            #expect(decoded?["route"] as? String == "/etcdserverpb.KV/Put" && decoded?["grpcStatus"] as? String == "INVALID_ARGUMENT", "\(lines)")
            #expect(lines.first { $0["status"] as? Int == 404 }?["route"] as? String == "unmatched")
            #expect(lines.first { $0["status"] as? Int == 403 }?["error"] as? String == "permissionDenied")
        }
    }
}
