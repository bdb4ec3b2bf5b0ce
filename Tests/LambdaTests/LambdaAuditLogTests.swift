import DiscfgAPI
import DiscfgCore
@testable import DiscfgLambda
import DiscfgSQLite
import Foundation
import Logging
import Testing

@Suite("Lambda: the audit log")
struct LambdaAuditLogTests {
    @Test("each request behind API Gateway has its audit line, naming the IAM caller, a change's revision and a refused principal, and never the value or message")
    func iamLines() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-lambda-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("audit.log")
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path)
        let access = LambdaAccess(modes: .iam, rules: [LambdaAccess.Rule(pattern: "arn:aws:iam::1:role/deployer", role: .admin)])
        let handler = LambdaHTTPHandler(store: store, access: access, options: ConfigAPI.Options(), auditLog: try LogSink(appendingTo: file.path))
        var logger = Logger(label: "audit")
        logger.logLevel = .critical
        let deployer = "arn:aws:iam::1:role/deployer"
        let value = "value-\(UUID().uuidString)"
        let message = "why-\(UUID().uuidString)"
        func send(_ method: String, _ path: String, _ body: String = "", headers: [(String, String)] = [], principal: String?) async -> Int {
            let request = GatewayRequest(method: method, path: path, query: "", headers: headers, body: Data(body.utf8), principal: principal)
            return await handler.handle(request, deadline: .now + .seconds(30), logger: logger).status
        }
        #expect(await send("PUT", "/v1/app", principal: deployer) == 201)
        #expect(await send("PUT", "/v1/app/keys/db/host", value, headers: [("discfg-message", message)], principal: deployer) == 201)
        #expect(await send("GET", "/v1/app/keys/db/host", principal: "arn:aws:iam::1:role/stranger") == 403)

        let text = try String(contentsOf: file, encoding: .utf8)
        let lines = try text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(lines.count == 3)
        let set = try #require(lines.dropFirst().first)
        #expect(set["principal"] as? String == "iam:\(deployer)")
        #expect(set["route"] as? String == "/v1/{config}/keys/{key}" && set["config"] as? String == "app" && set["key"] as? String == "/db/host")
        #expect(set["status"] as? Int == 201 && set["revision"] as? Int == 1)
        let refused = try #require(lines.last)
        #expect(refused["principal"] as? String == "iam:arn:aws:iam::1:role/stranger")
        #expect(refused["status"] as? Int == 403 && refused["error"] as? String == "permissionDenied")
        #expect(!text.contains(value) && !text.contains(message))
    }
}
