import DiscfgAPI
import Testing

/// `RequestDeadlines.answer(by:)` bounds work a transport must finish before a hard
/// deadline (the Lambda handler uses it). An answer that came in time must never be
/// replaced by "too late".
@Suite("API: answering before a hard deadline")
struct AnswerByTests {
    @Test("work that finishes long before the cutoff always gives its answer")
    func answerInTimeIsNeverLost() async {
        let lost = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var lost = 0
                    for round in 0..<5_000 {
                        let answer = await RequestDeadlines.answer(by: .now + .seconds(60)) { round }
                        if answer != round { lost += 1 }
                    }
                    return lost
                }
            }
            return await group.reduce(0, +)
        }
        #expect(lost == 0, "\(lost) of 20000 answers that came in time were reported as too late")
    }

    @Test("work that outlasts the cutoff gives no answer, and is cancelled")
    func lateWorkIsCutOff() async {
        let answer = await RequestDeadlines.answer(by: .now + .milliseconds(50)) { () async -> Bool in
            try? await Task.sleep(for: .seconds(30))
            return Task.isCancelled
        }
        #expect(answer == nil)
    }
}
