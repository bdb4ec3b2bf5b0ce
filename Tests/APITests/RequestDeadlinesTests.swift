@testable import DiscfgAPI
import DiscfgCore
import DiscfgService
import Testing

/// The router's hold over a request (``RequestDeadlines``) lets go of it as its write
/// begins: neither its timeout nor its caller's cancellation abandons a write half-way.
@Suite("API: the router's hold over a request")
struct RequestDeadlinesTests {
    /// Runs a request whose step signals `began` as it starts (after `Pipeline.commit`
    /// when `writes`), waits for `release`, and returns whether it was then cancelled.
    static func request(_ deadlines: RequestDeadlines, writes: Bool, began: AsyncStream<Void>.Continuation, release: AsyncStream<Void>) -> Task<Bool, any Error> {
        Task {
            try await deadlines.run { _ in
                func step() async -> Bool {
                    began.yield()
                    for await _ in release { break }
                    return Task.isCancelled
                }
                return writes ? try await Pipeline.commit { await step() } : await step()
            }
        }
    }

    @Test("a caller cancelled while its write is under way: the write is not cancelled; before it began, the request is")
    func callerCancelled() async throws {
        let deadlines = RequestDeadlines(timeout: .seconds(30))
        for writes in [true, false] {
            let (began, beganContinuation) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
            let request = Self.request(deadlines, writes: writes, began: beganContinuation, release: release)
            for await _ in began { break }
            // Cancellation handlers run within cancel(): the body's fate is decided here.
            request.cancel()
            releaseContinuation.yield()
            let result = await request.result
            if writes {
                #expect(try result.get() == false, "a write begun is not cancelled")
            } else {
                #expect(throws: DiscfgError.self) { try result.get() }
            }
        }
    }
}
