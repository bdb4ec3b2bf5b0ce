import DiscfgCore
import DiscfgTestSupport
import Foundation
import NIOHTTP1
import Testing

/// `discfg serve` answers the recorded set of requests byte for byte as recorded
/// (`Tests/Recorded/api.txt`), on a fresh store whose clock stands still.
@Suite("Recorded outputs: REST")
struct RecordedRESTTests {
    @Test("serve answers the recorded requests as recorded")
    func serve() async throws {
        let transcript = try await withServer(try await LiveServer.start(clock: ManualClock())) { server in
            var transcript = ""
            for request in RecordedRequest.api {
                let reply = try await server.request(
                    HTTPMethod(rawValue: request.method), request.target, body: request.body, headers: request.headers
                )
                transcript += Recording.exchange(request, status: reply.status, headers: reply.headers.map { ($0.name, $0.value) }, body: reply.body)
            }
            return transcript
        }
        let difference = try Recording.compare(transcript, with: "api.txt")
        #expect(difference == nil, "\(difference ?? "")")
    }
}
