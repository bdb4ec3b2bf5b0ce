import DiscfgAPI
import DiscfgCore
@testable import DiscfgLambda
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Logging
import Testing

/// The Lambda function's HTTP handler answers the recorded set of requests byte for byte
/// as `serve` does (`Tests/Recorded/api.txt`), on a fresh SQLite store whose clock stands
/// still: one router behind both faces, so one recording.
@Suite("Recorded outputs: Lambda")
struct RecordedLambdaTests {
    @Test("the function answers the recorded requests as recorded")
    func function() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-recorded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.db").path, clock: ManualClock())
        let handler = LambdaHTTPHandler(store: store, access: LambdaAccess(modes: []), options: ConfigAPI.Options())
        var logger = Logger(label: "recorded")
        logger.logLevel = .critical
        var transcript = ""
        for request in RecordedRequest.api {
            let gateway = GatewayRequest(
                method: request.method, path: request.path, query: request.query,
                headers: request.headers + [("host", "abc123.execute-api.us-east-1.amazonaws.com")], body: request.body ?? Data(), principal: nil
            )
            let response = await handler.handle(gateway, deadline: .now + .seconds(30), logger: logger)
            transcript += Recording.exchange(request, status: response.status, headers: response.headers, body: response.body)
        }
        let difference = try Recording.compare(transcript, with: "api.txt")
        #expect(difference == nil, "\(difference ?? "")")
    }
}
