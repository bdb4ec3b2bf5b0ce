import AsyncHTTPClient
import DiscfgTestSupport
import Foundation
import NIOCore
import Testing

/// A DynamoDB endpoint that refuses connections (its port closed, nothing listening) is
/// told at once on every face of `serve`: the AWS client tries to connect a few times
/// within a fraction of a second, not for the whole request deadline, and the answer is
/// the store's `unavailable` with a correlation id, under which the log names the
/// endpoint that refused in one sentence.
extension DeadStoreTests {
    /// serve's `--request-timeout` for the refused endpoint: long, so that an answer
    /// within ``refusedBound`` cannot be the deadline's.
    static let refusedTimeout = 30
    /// What a refused endpoint's answer is held to: a hang guard well under the
    /// deadline, not a measure of speed.
    static let refusedBound = 10.0

    @Test("a refused endpoint: every face (REST fast path and router, etcd gRPC and gateway) answers unavailable well before the 30 s deadline, the log naming the endpoint", .timeLimit(.minutes(10)))
    func refusedEndpoint() async throws {
        try await Self.withServe(timeout: Self.refusedTimeout) { serve, proxy, table, _ in
            #expect(try await serve.rest("create", "PUT", "/v1/app", body: "").0.status == "201")
            #expect(try await serve.rest("put", "PUT", "/v1/app/keys/a", body: "1").0.status == "201")
            #expect(try await serve.rest("get", "GET", "/v1/app/keys/a").1?.item?.value == "1")
            #expect(try await serve.etcd("etcd put", "put", "e", "1").1["code"] as? String == "OK")
            #expect(try await serve.gateway("gateway put", "put", key: "g", value: "1").status == "200")

            try await proxy.set(.refuse)
            let died = ContinuousClock.now
            let viewed = try await eventually("the view stops answering", timeout: .seconds(60), interval: .milliseconds(100)) {
                let answer = try await serve.rest("REST GET of a viewed key", "GET", "/v1/app/keys/a").0
                return answer.status == "200" ? nil : answer
            }
            print("refused store: a viewed key was answered from the view for at most \(String(format: "%.2f", Serve.seconds(ContinuousClock.now - died))) s")
            var answers = [viewed]
            // Each answer is printed as it comes, so that a run that hangs shows how far it got.
            func asked(_ answer: Answer) {
                print("refused store: \(answer)")
                answers.append(answer)
            }
            asked(try await serve.rest("REST PUT (event loop)", "PUT", "/v1/app/keys/a", body: "2").0)
            asked(try await serve.rest("REST GET of a key no view holds (event loop)", "GET", "/v1/app/keys/b").0)
            asked(try await serve.rest("REST list (router)", "GET", "/v1/app/keys").0)
            asked(try await serve.rest("REST txn (router)", "POST", "/v1/app/txn", body: #"{"success": [{"op": "put", "key": "/t", "value": "x"}]}"#).0)
            asked(try await serve.etcd("etcd gRPC Put", "put", "e", "2").0)
            asked(try await serve.etcd("etcd gRPC Range", "range", "e").0)
            asked(try await serve.gateway("etcd gateway put", "put", key: "g", value: "2"))
            asked(try await serve.gateway("etcd gateway range", "range", key: "g"))
            let words = Self.internalWords(table: table, proxy: proxy.endpoint)
            let sentence = "the DynamoDB endpoint \(proxy.endpoint.absoluteString) refused the connection"
            for answer in answers {
                #expect(["503", "UNAVAILABLE"].contains(answer.status), "\(answer)")
                #expect(answer.seconds < Self.refusedBound, "\(answer)")
                #expect(answer.message.contains("the store is unavailable"), "\(answer)")
                for word in words { #expect(!answer.message.contains(word), "\"\(word)\" shown: \(answer)") }
                let id = try #require(answer.correlationID, "\(answer)")
                // The line may reach the test's reader of serve's output after the answer.
                let line = try? await eventually("serve logs \(id)", timeout: .seconds(15), interval: .milliseconds(50)) {
                    serve.server.output.stderr.split(separator: "\n").first { $0.contains(id) }
                }
                #expect(line?.contains(sentence) == true, "the log line of \(id) names the endpoint: \(line ?? "none")")
                for errno in ["errno", "Connection refused", "NIOConnectionError", "NetworkError"] {
                    #expect(line?.contains(errno) == false, "\"\(errno)\" logged: \(line ?? "")")
                }
            }
        }
    }

    @Test("the CLI over a refused or unresolvable DynamoDB endpoint: one sentence naming it, exit 1, at once", .timeLimit(.minutes(2)))
    func refusedAtTheCommandLine() async throws {
        let (runner, _) = try await CLIRunner.onDynamoDB()
        let cli = runner
        defer { cli.cleanUp() }
        let refused = "http://127.0.0.1:\(try MotoServer.freeLoopbackPort())"
        // `.invalid` never resolves (RFC 6761).
        let unresolved = "http://dynamodb.discfg-test.invalid:8000"
        for (endpoint, sentence) in [
            (refused, "the DynamoDB endpoint \(refused) refused the connection"),
            (unresolved, "the DynamoDB endpoint \(unresolved) was not found: its host name does not resolve"),
        ] {
            for arguments in [["get", "app", "k"], ["set", "app", "k", "v"]] {
                let start = ContinuousClock.now
                let result = try await cli.run(arguments + ["--store", "dynamodb://us-east-1/discfg?endpoint=\(endpoint)"])
                let took = ContinuousClock.now - start
                print("refused store: discfg \(arguments[0]) over \(endpoint): exit \(result.status) in \(took)")
                #expect(result.status == 1, "\(result.stderr)")
                #expect(result.stderr == "discfg: \(sentence)\n", "\(result.stderr)")
                // The request timeout is 10 s, the retry budget 41 s: a hang guard, not a speed figure.
                #expect(took < .seconds(8), "\(took)")
            }
        }
    }
}

extension DeadStoreTests.Serve {
    /// One call of the etcd JSON gateway (`/v3/kv/put` or `/v3/kv/range`), as curl
    /// makes it: the HTTP status, and etcd's error message with its correlation id.
    func gateway(_ name: String, _ operation: String, key: String, value: String? = nil) async throws -> DeadStoreTests.Answer {
        var fields = [#""key": "\#(Data(key.utf8).base64EncodedString())""#]
        if let value { fields.append(#""value": "\#(Data(value.utf8).base64EncodedString())""#) }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(etcdPort)/v3/kv/\(operation)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "{" + fields.joined(separator: ", ") + "}"))
        let start = ContinuousClock.now
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let seconds = Self.seconds(ContinuousClock.now - start)
        let json = try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any]
        let message = json?["message"] as? String ?? ""
        let id = message.range(of: #"correlation id [0-9a-f]{16}"#, options: .regularExpression).map { String(message[$0].suffix(16)) }
        return DeadStoreTests.Answer(name: name, status: String(response.status.code), message: message, correlationID: id, seconds: seconds)
    }
}
