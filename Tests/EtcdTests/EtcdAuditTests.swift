@testable import DiscfgEtcd
import DiscfgCore
import DiscfgNetwork
import DiscfgService
import Foundation
import GRPCCore
import Synchronization
import Testing

@Suite("etcd API: audit lines")
struct EtcdAuditTests {
    @Test("a call's line names its RPC, caller, key range escaped printable, status and the revision of its change; a refused call's names no caller")
    func lines() async throws {
        let written = LinesWritten()
        let trail = AuditTrail { written.append($0) }
        let audit = EtcdAudit(trail: trail, config: "etcd")
        let put = Etcdserverpb_KV.Method.Put.descriptor
        var response = Etcdserverpb_PutResponse()
        response.header.revision = 7
        _ = try await audit.call(put, key: Data("app/\u{1}\\\"x".utf8), revision: { $0.header.revision }) { response }
        await #expect(throws: RPCError.self) {
            try await audit.call(Etcdserverpb_KV.Method.Range.descriptor, key: Data("a".utf8), rangeEnd: Data([0])) { () async throws -> Int in
                throw RPCError(code: .permissionDenied, message: "etcdserver: permission denied")
            }
        }
        audit.refused(Etcdserverpb_KV.Method.DeleteRange.descriptor, RPCError(code: .invalidArgument, message: "etcdserver: user name is empty"))
        trail.flush()
        let lines = try written.text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(lines.count == 3)
        #expect(lines[0]["route"] as? String == "/etcdserverpb.KV/Put" && lines[0]["api"] as? String == "etcd")
        #expect(lines[0]["principal"] as? String == "anonymous:etcd" && lines[0]["config"] as? String == "etcd")
        #expect(lines[0]["key"] as? String == #"app/\x01\x5C"x"# && lines[0]["grpcStatus"] as? String == "OK" && lines[0]["revision"] as? Int == 7)
        #expect(lines[1]["grpcStatus"] as? String == "PERMISSION_DENIED" && lines[1]["rangeEnd"] as? String == #"\x00"# && lines[1]["revision"] == nil)
        #expect(lines[2]["principal"] is NSNull && lines[2]["grpcStatus"] as? String == "INVALID_ARGUMENT")
    }

    @Test("a call's line names the action the pipeline ran it as, allowed or refused by the gate; a call refused before it ran names none")
    func actions() async throws {
        let written = LinesWritten()
        let trail = AuditTrail { written.append($0) }
        let audit = EtcdAudit(trail: trail, config: "etcd")
        let config = try ConfigName("etcd")
        let scoped = Caller(name: "token:t", role: .write, scopes: [try AccessScope(config: config, etcdPrefix: Array("app/".utf8))])
        let key = EtcdKeys.target(key: Data("app/x".utf8), rangeEnd: Data())
        _ = try await audit.call(Etcdserverpb_KV.Method.Put.descriptor, key: Data("app/x".utf8)) {
            try await Pipeline.perform(Action(.set, on: config, reaching: key), by: scoped, deadline: nil) { 1 }
        }
        await #expect(throws: DiscfgError.self) {
            try await audit.call(Etcdserverpb_KV.Method.DeleteRange.descriptor, key: Data("db/".utf8), rangeEnd: Data("db0".utf8)) {
                try await Pipeline.perform(Action(.delete, on: config, reaching: EtcdKeys.target(key: Data("db/".utf8), rangeEnd: Data("db0".utf8))), by: scoped, deadline: nil) { 1 }
            }
        }
        audit.refused(Etcdserverpb_KV.Method.Range.descriptor, RPCError(code: .invalidArgument, message: "etcdserver: user name is empty"))
        trail.flush()
        let lines = try written.text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(lines.count == 3)
        #expect(lines[0]["action"] as? String == "set" && lines[0]["grpcStatus"] as? String == "OK")
        #expect(lines[1]["action"] as? String == "delete" && lines[1]["grpcStatus"] as? String == "PERMISSION_DENIED")
        #expect(lines[2]["action"] == nil)
    }

    @Test("Authenticate's line names the token it authenticated; refused, it names the user name tried, escaped and cut at 64 bytes, never the password or a token's text")
    func authenticate() async throws {
        let fixture = try EtcdAccessTests.Store()
        defer { fixture.cleanUp() }
        let gate = EtcdAccessGate(.tokensRequired(fixture.store))
        let token = try await fixture.token(.write)
        await gate.read()
        let written = LinesWritten()
        let trail = AuditTrail { written.append($0) }
        let audit = EtcdAudit(trail: trail, config: "etcd")
        let attempts: [(name: String, password: String)] = [
            (token.id, token.text), ("fedcba987654", token.text), ("root", "hunter2"), (token.text, token.id),
            (String(repeating: "a", count: 70) + "\u{1}", "x"),
        ]
        for (name, password) in attempts {
            _ = try? await audit.authenticate(user: name) { try gate.authenticate(name: name, password: password) }
        }
        trail.flush()
        let text = written.text
        #expect(!text.contains(token.text) && !text.contains("hunter2") && !text.contains("dcfg_"), "\(text)")
        let lines = try text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(lines.count == 5)
        #expect(lines.allSatisfy { $0["route"] as? String == "/etcdserverpb.Auth/Authenticate" })
        #expect(lines[0]["principal"] as? String == "token:\(token.id)" && lines[0]["user"] == nil && lines[0]["grpcStatus"] as? String == "OK")
        #expect(lines[1]["principal"] is NSNull && lines[1]["user"] as? String == "fedcba987654" && lines[1]["grpcStatus"] as? String == "INVALID_ARGUMENT")
        #expect(lines[2]["user"] as? String == "root")
        #expect(lines[3]["user"] as? String == "(a discfg token's text; not shown)")
        #expect(lines[4]["user"] as? String == String(repeating: "a", count: 64) + "…")
    }

    @Test("without a trail a call runs as it would and notes nothing")
    func noTrail() async throws {
        let audit = EtcdAudit(trail: nil, config: "etcd")
        #expect(try await audit.call(Etcdserverpb_KV.Method.Put.descriptor) { 42 } == 42)
    }
}

private final class LinesWritten: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    func append(_ lines: [UInt8]) { bytes.withLock { $0 += lines } }
    var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
}
