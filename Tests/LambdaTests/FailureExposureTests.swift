import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// The Lambda function answers its store's failures as every face does (the one failure
/// policy): the caller reads the generic envelope with a correlation id and the policy's
/// status; the table, the endpoint and AWS's words go only to the function's log, on a
/// line with the same correlation id. A store that cannot be reached before the
/// invocation's deadline is answered by the deadline, in the server's words.
@Suite("Lambda: a store's failure never shows its insides")
struct FailureExposureTests {
    typealias Request = GatewayEvent.Request

    /// Sends `request` and checks the answer is the policy's generic one for a store
    /// failure: `status`, code `unavailable`, a correlation id, none of `hidden`, and the
    /// log line with that id holding `logged` (the detail).
    static func expectGeneric(
        _ request: Request, _ lambda: RunningLambda, hidden: [String], logged: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let (answer, invocation) = try await lambda.request(GatewayEvent.httpAPI(request), deadline: .seconds(20))
        #expect(answer.statusCode == 503, "\(answer.raw)", sourceLocation: sourceLocation)
        let error = try #require(try answer.envelope().error, "\(answer.raw)", sourceLocation: sourceLocation)
        #expect(error.code == .unavailable, sourceLocation: sourceLocation)
        #expect(error.field == nil, sourceLocation: sourceLocation)
        let id = try #require(error.correlationId, "\(answer.raw)", sourceLocation: sourceLocation)
        #expect(error.message.contains(id) && error.message.contains("the store is unavailable"), "\(error.message)", sourceLocation: sourceLocation)
        for word in hidden {
            #expect(!answer.body.contains(word), "\"\(word)\" shown: \(answer.body)", sourceLocation: sourceLocation)
        }
        let lines = await lambda.logLines(requestID: invocation.requestID) { $0.contains(id) }
        let line = lines.first { $0.contains(id) }
        #expect(line?.contains(logged) == true, "the log line of \(id) has the detail: \(lines)", sourceLocation: sourceLocation)
    }

    @Test("DynamoDB answering every call with a 500: 503, the generic envelope and a correlation id; the detail in the log", .timeLimit(.minutes(3)))
    func serverErrors() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await withServer(try await FaultProxy.start(upstream: table.moto.endpoint, seed: 1, rates: [.serverError: 1])) { proxy in
                let store = "dynamodb://us-east-1/\(table.name)?endpoint=\(proxy.endpoint.absoluteString)"
                try await withLambda(table, environment: ["DISCFG_STORE": store]) { lambda in
                    let hidden = [table.name, "DynamoDB", "dynamodb", "127.0.0.1", String(proxy.endpoint.port ?? 0), "InternalServerError", "HTTP 500", "retries", "Swift", "NIO"]
                    for request in [Request("PUT", "/v1/app/keys/k", text: "2"), Request("GET", "/v1/app/keys/k"), Request("GET", "/v1/app/keys")] {
                        try await Self.expectGeneric(request, lambda, hidden: hidden, logged: table.name)
                    }
                }
            }
        }
    }

    @Test("a DynamoDB endpoint that goes away: refused, 503 and a correlation id well before the invocation's 30 s deadline, the log naming the endpoint; silent, 503 by a 5 s deadline; nothing changed", .timeLimit(.minutes(3)))
    func deadEndpoint() async throws {
        try await withMotoTable { table in
            try await table.createConfig("app")
            try await withServer(try await FaultProxy.start(upstream: table.moto.endpoint, seed: 1, rates: [:])) { proxy in
                let store = "dynamodb://us-east-1/\(table.name)?endpoint=\(proxy.endpoint.absoluteString)"
                try await withLambda(table, environment: ["DISCFG_STORE": store]) { lambda in
                    let (alive, _) = try await lambda.request(GatewayEvent.httpAPI(Request("PUT", "/v1/app/keys/k", text: "1")))
                    #expect(alive.statusCode == 201, "\(alive.raw)")
                    let hidden = [table.name, "DynamoDB", "dynamodb", "127.0.0.1", String(proxy.endpoint.port ?? 0), "NetworkError", "onnection refused", "timed out", "Swift", "NIO"]
                    let requests = [Request("PUT", "/v1/app/keys/k", text: "2"), Request("GET", "/v1/app/keys/k"), Request("GET", "/v1/app/keys")]

                    // Refused: the store is told at once (a few tries of the connection),
                    // not after the invocation's remaining time; the log names the endpoint.
                    try await proxy.set(.refuse)
                    for request in requests {
                        let (answer, invocation) = try await lambda.request(GatewayEvent.httpAPI(request), deadline: .seconds(30))
                        let took = invocation.finishedAt - invocation.deliveredAt
                        print("dead store: Lambda \(request.method) \(request.path) over a refused endpoint: \(answer.statusCode) in \(took)")
                        #expect(took < .seconds(10), "a hang guard, well under the 30 s deadline: \(took)")
                        #expect(answer.statusCode == 503, "\(answer.raw)")
                        let error = try #require(try answer.envelope().error, "\(answer.raw)")
                        let id = try #require(error.correlationId, "\(answer.raw)")
                        #expect(error.code == .unavailable && error.message.contains("the store is unavailable"), "\(answer.raw)")
                        for word in hidden { #expect(!answer.body.contains(word), "\"\(word)\" shown: \(answer.body)") }
                        let lines = await lambda.logLines(requestID: invocation.requestID) { $0.contains(id) }
                        let line = lines.first { $0.contains(id) } ?? ""
                        #expect(line.contains("the DynamoDB endpoint \(proxy.endpoint.absoluteString) refused the connection"), "\(lines)")
                        #expect(!line.contains("errno") && !line.contains("NetworkError"), "\(line)")
                    }

                    // Silent: the store waits for an answer until the deadline, whose
                    // answer (the failure policy shows it as it is) says what it knows of a change.
                    try await proxy.set(.blackHole)
                    for request in requests.prefix(2) {
                        let (answer, invocation) = try await lambda.request(GatewayEvent.httpAPI(request), deadline: .seconds(5))
                        #expect(invocation.finishedAt - invocation.deliveredAt < .seconds(5))
                        #expect(answer.statusCode == 503, "\(answer.raw)")
                        let error = try #require(try answer.envelope().error, "\(answer.raw)")
                        #expect(error.code == .unavailable && error.field == "timeout", "\(answer.raw)")
                        for word in hidden { #expect(!answer.body.contains(word), "\"\(word)\" shown: \(answer.body)") }
                    }
                    try await proxy.set(.pass)
                    let (back, _) = try await lambda.request(GatewayEvent.httpAPI(Request("GET", "/v1/app/keys/k")))
                    #expect(try back.envelope().item?.value == "1", "nothing was changed while the endpoint was gone: \(back.raw)")
                }
            }
        }
    }

    @Test("a table that does not exist: 503 and a correlation id, not the table's name or the hint meant for its operator")
    func missingTable() async throws {
        try await withMotoTable { table in
            let missing = "missing-\(UUID().uuidString.prefix(8).lowercased())"
            let store = "dynamodb://us-east-1/\(missing)?endpoint=\(table.moto.endpoint.absoluteString)"
            try await withLambda(table, environment: ["DISCFG_STORE": store]) { lambda in
                let hidden = [missing, "ResourceNotFound", "DynamoDB", "discfg init", "hint", "127.0.0.1"]
                try await Self.expectGeneric(Request("GET", "/v1/app/keys/k"), lambda, hidden: hidden, logged: missing)
            }
        }
    }
}
