@testable import DiscfgAPI
import DiscfgCore
import NIOCore
import NIOHTTP1
import Testing

/// The life of a REST connection as ``ConnectionStateMachine`` decides it, event by
/// event, with no channel and a clock the test moves.
@Suite("REST connection state machine")
struct ConnectionStateMachineTests {
    static let idle = TimeAmount.seconds(60)
    static let stall = TimeAmount.seconds(30)
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static let head = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/app/keys/k"))
    static let body = HTTPServerRequestPart.body(ByteBuffer(string: "v"))
    static let end = HTTPServerRequestPart.end(nil)

    /// A machine admitted at `start`, with the idle timer scheduled.
    static func serving(idleTimeout: TimeAmount? = idle) -> ConnectionStateMachine {
        var machine = ConnectionStateMachine(idleTimeout: idleTimeout, stallTimeout: stall)
        _ = machine.activate(admitted: true, now: start)
        return machine
    }

    /// Takes a whole request at `now`, and hands it to the router.
    static func routeRequest(_ machine: inout ConnectionStateMachine, at now: NIODeadline = start, wantingViewOf config: ConfigName? = nil) {
        let receive1 = machine.receive(head, now: now)
        #expect(receive1 == .take)
        machine.handOn(wantingViewOf: config)
        let receive2 = machine.receive(end, now: now)
        #expect(receive2 == .take)
        machine.passOn()
    }

    // MARK: Arriving and leaving

    @Test("an admitted connection serves and schedules the idle timer; it is counted out once")
    func admitted() {
        var machine = ConnectionStateMachine(idleTimeout: Self.idle, stallTimeout: Self.stall)
        #expect(machine.awaitsActivation)
        let activate1 = machine.activate(admitted: true, now: Self.start)
        #expect(activate1 == Self.start + Self.idle)
        #expect(machine.phase == .serving)
        #expect(!machine.awaitsActivation)
        let deactivate1 = machine.deactivate()
        #expect(deactivate1, "the cap counts it out")
        let deactivate2 = machine.deactivate()
        #expect(!deactivate2, "only once")
        #expect(machine.phase == .closed)
    }

    @Test("without an idle timeout no timer is scheduled")
    func noIdleTimeout() {
        var machine = ConnectionStateMachine(idleTimeout: nil, stallTimeout: Self.stall)
        let activate1 = machine.activate(admitted: true, now: Self.start)
        #expect(activate1 == nil)
        Self.routeRequest(&machine)
        let endRoutedAnswer1 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer1 == .none)
        let idleTimerFired1 = machine.idleTimerFired(now: Self.start + .hours(1))
        #expect(idleTimerFired1 == .none)
    }

    @Test("over the cap: the first request head is refused, everything else dropped, and the cap never counted it")
    func refusedOverTheCap() {
        var machine = ConnectionStateMachine(idleTimeout: Self.idle, stallTimeout: Self.stall)
        let activate1 = machine.activate(admitted: false, now: Self.start)
        #expect(activate1 == Self.start + Self.idle, "a refused connection that sends nothing still times out")
        #expect(machine.phase == .refusing)
        let receive1 = machine.receive(Self.body, now: Self.start)
        #expect(receive1 == .drop, "nothing but a head is answered")
        let receive2 = machine.receive(Self.head, now: Self.start)
        #expect(receive2 == .refuse)
        #expect(machine.phase == .closing)
        let receive3 = machine.receive(Self.end, now: Self.start)
        #expect(receive3 == .drop)
        let receive4 = machine.receive(Self.head, now: Self.start)
        #expect(receive4 == .drop, "refused once")
        let deactivate1 = machine.deactivate()
        #expect(!deactivate1, "not counted in, so not counted out")
    }

    @Test("a refused connection that sends nothing is closed by the idle timer")
    func refusedAndSilent() {
        var machine = ConnectionStateMachine(idleTimeout: Self.idle, stallTimeout: Self.stall)
        _ = machine.activate(admitted: false, now: Self.start)
        let idleTimerFired1 = machine.idleTimerFired(now: Self.start + Self.idle)
        #expect(idleTimerFired1 == .close)
    }

    // MARK: Idle

    @Test("the idle timer closes a connection with nothing in flight after the whole timeout")
    func idleCloses() {
        var machine = Self.serving()
        let idleTimerFired1 = machine.idleTimerFired(now: Self.start + Self.idle)
        #expect(idleTimerFired1 == .close)
        #expect(machine.phase == .closing)
        let receive1 = machine.receive(Self.head, now: Self.start + Self.idle)
        #expect(receive1 == .drop, "nothing is taken once closing")
    }

    @Test("the router's answer to bytes the codec could not parse, which no request here stands for, changes nothing")
    func answerToUnparsedBytes() {
        var machine = Self.serving()
        let unasked = machine.endRoutedAnswer(now: Self.start + .seconds(1))
        #expect(unasked == .none)
        Self.routeRequest(&machine, at: Self.start + .seconds(2))
        let answered = machine.endRoutedAnswer(now: Self.start + .seconds(3))
        #expect(answered == .none, "the timer is still out")
        let fired = machine.idleTimerFired(now: Self.start + Self.idle)
        #expect(fired == .reschedule(at: Self.start + .seconds(3) + Self.idle), "the routed request was answered once, and the connection is idle since")
    }

    @Test("activity since the timer was set reschedules it from the last activity")
    func idleReschedules() {
        var machine = Self.serving()
        let later = Self.start + .seconds(40)
        Self.routeRequest(&machine, at: later)
        let endRoutedAnswer1 = machine.endRoutedAnswer(now: later + .seconds(1))
        #expect(endRoutedAnswer1 == .none, "the timer is still out")
        let idleTimerFired1 = machine.idleTimerFired(now: Self.start + Self.idle)
        #expect(idleTimerFired1 == .reschedule(at: later + .seconds(1) + Self.idle))
        let idleTimerFired2 = machine.idleTimerFired(now: later + .seconds(1) + Self.idle)
        #expect(idleTimerFired2 == .close)
    }

    @Test("a connection answering a request it has read whole is not idle; the timer is set again when the answer ends")
    func notIdleWhileAnswering() {
        var machine = Self.serving()
        Self.routeRequest(&machine)
        let idleTimerFired1 = machine.idleTimerFired(now: Self.start + .hours(1))
        #expect(idleTimerFired1 == .none)
        let answered = Self.start + .hours(1)
        let endRoutedAnswer1 = machine.endRoutedAnswer(now: answered)
        #expect(endRoutedAnswer1 == .scheduleIdleTimer(at: answered + Self.idle))
        let idleTimerFired2 = machine.idleTimerFired(now: answered + Self.idle)
        #expect(idleTimerFired2 == .close)
    }

    @Test("a request whose head came and whose end does not (a slow body) counts as idle")
    func slowRequestIsIdle() {
        var machine = Self.serving()
        let receive1 = machine.receive(Self.head, now: Self.start)
        #expect(receive1 == .take)
        machine.handOn(wantingViewOf: nil)
        let idleTimerFired1 = machine.idleTimerFired(now: Self.start + Self.idle)
        #expect(idleTimerFired1 == .close)
    }

    @Test("answers ending while others are in flight do not schedule the timer")
    func pipelinedAnswersKeepTheTimer() {
        var machine = Self.serving()
        _ = machine.idleTimerFired(now: Self.start + .seconds(1))  // rescheduled: out again
        Self.routeRequest(&machine)
        Self.routeRequest(&machine)
        let endRoutedAnswer1 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer1 == .none)
        let endRoutedAnswer2 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer2 == .none, "the timer is out already")
    }

    // MARK: Quiesce

    @Test("shutdown closes an idle connection at once")
    func quiesceIdle() {
        var machine = Self.serving()
        let quiesce1 = machine.quiesce()
        #expect(quiesce1)
        #expect(machine.phase == .closing)
        let quiesce2 = machine.quiesce()
        #expect(!quiesce2, "asked once")
    }

    @Test("shutdown closes a busy connection after its answer, which says Connection: close; requests sent meanwhile are dropped")
    func quiesceBusy() {
        var machine = Self.serving()
        let receive1 = machine.receive(Self.head, now: Self.start)
        #expect(receive1 == .take)
        machine.handOn(wantingViewOf: nil)
        #expect(!machine.answersClose)
        let quiesce1 = machine.quiesce()
        #expect(!quiesce1, "not while a request is in flight")
        #expect(machine.phase == .quiescing)
        let receive2 = machine.receive(Self.body, now: Self.start)
        #expect(receive2 == .take, "the request in flight is read to its end")
        let receive3 = machine.receive(Self.end, now: Self.start)
        #expect(receive3 == .take)
        let receive4 = machine.receive(Self.head, now: Self.start)
        #expect(receive4 == .drop, "a request sent after shutdown began is not served")
        let receive5 = machine.receive(Self.body, now: Self.start)
        #expect(receive5 == .drop)
        let receive6 = machine.receive(Self.end, now: Self.start)
        #expect(receive6 == .drop)
        #expect(!machine.mayAnswerHere(writable: true))
        #expect(machine.answersClose)
        #expect(machine.routedHead(status: .ok).closing)
        let idleTimerFired1 = machine.idleTimerFired(now: Self.start + .hours(1))
        #expect(idleTimerFired1 == .none, "answering: not idle")
        let endRoutedAnswer1 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer1 == .close)
        #expect(machine.phase == .closing)
    }

    @Test("shutdown with pipelined requests closes after the last answer")
    func quiescePipelined() {
        var machine = Self.serving()
        Self.routeRequest(&machine)
        Self.routeRequest(&machine)
        let quiesce1 = machine.quiesce()
        #expect(!quiesce1)
        let endRoutedAnswer1 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer1 == .none)
        let endRoutedAnswer2 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer2 == .close)
    }

    @Test("shutdown during a write with the store closes after the write's answer, dropping what was parked")
    func quiesceDuringWrite() {
        var machine = Self.serving()
        let receive1 = machine.receive(Self.head, now: Self.start)
        #expect(receive1 == .take)
        let receive2 = machine.receive(Self.end, now: Self.start)
        #expect(receive2 == .take)
        machine.startWrite()
        let receive3 = machine.receive(Self.head, now: Self.start)
        #expect(receive3 == .park)
        let receive4 = machine.receive(Self.end, now: Self.start)
        #expect(receive4 == .park)
        let quiesce1 = machine.quiesce()
        #expect(!quiesce1)
        let finishWrite1 = machine.finishWrite()
        #expect(finishWrite1)
        #expect(machine.answersClose, "the write's answer says Connection: close")
        let endLocalAnswer1 = machine.endLocalAnswer(now: Self.start)
        #expect(endLocalAnswer1 == .close)
        let unpark1 = machine.unpark()
        #expect(unpark1 == nil, "the request sent after the write is not served")
    }

    // MARK: Stall

    @Test("a client that stops reading is closed after the stall timeout unless it reads again")
    func stall() {
        var machine = Self.serving()
        let writabilityChanged1 = machine.writabilityChanged(writable: true)
        #expect(writabilityChanged1 == .none)
        let writabilityChanged2 = machine.writabilityChanged(writable: false)
        #expect(writabilityChanged2 == .scheduleStallTimer(in: Self.stall))
        let writabilityChanged3 = machine.writabilityChanged(writable: false)
        #expect(writabilityChanged3 == .none, "one timer")
        let writabilityChanged4 = machine.writabilityChanged(writable: true)
        #expect(writabilityChanged4 == .cancelStallTimer)
        let stallTimerFired1 = machine.stallTimerFired()
        #expect(!stallTimerFired1, "a timer cancelled as it fired closes nothing")
        let writabilityChanged5 = machine.writabilityChanged(writable: false)
        #expect(writabilityChanged5 == .scheduleStallTimer(in: Self.stall))
        let stallTimerFired2 = machine.stallTimerFired()
        #expect(stallTimerFired2)
        #expect(machine.phase == .closing)
        let writabilityChanged6 = machine.writabilityChanged(writable: false)
        #expect(writabilityChanged6 == .none)
    }
}
