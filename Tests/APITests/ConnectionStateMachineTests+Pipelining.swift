@testable import DiscfgAPI
import DiscfgCore
import NIOCore
import NIOHTTP1
import Testing

/// Answers leaving in the order their requests came, whether the event loop or the
/// router gives them: a write with the store holding back what follows it, a routed read
/// loading its view, and the end of a read flushing.
extension ConnectionStateMachineTests {
    @Test("a request the event loop could answer at once waits its turn behind one with the router")
    func fastAnswerWaitsForTheRouter() {
        var machine = Self.serving()
        let receive1 = machine.receive(Self.head, now: Self.start)
        #expect(receive1 == .take)
        #expect(machine.mayAnswerHere(writable: true), "nothing before it")
        machine.handOn(wantingViewOf: nil)
        let receive2 = machine.receive(Self.end, now: Self.start)
        #expect(receive2 == .take)
        machine.passOn()
        let receive3 = machine.receive(Self.head, now: Self.start)
        #expect(receive3 == .take)
        #expect(!machine.mayAnswerHere(writable: true), "its answer would overtake the router's")
        machine.handOn(wantingViewOf: nil)
        let receive4 = machine.receive(Self.end, now: Self.start)
        #expect(receive4 == .take)
        let endRoutedAnswer1 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer1 == .none)
        #expect(!machine.mayAnswerHere(writable: true), "the second is with the router still")
        let endRoutedAnswer2 = machine.endRoutedAnswer(now: Self.start)
        #expect(endRoutedAnswer2 == .none, "the idle timer set at activation is still out")
        let receive5 = machine.receive(Self.head, now: Self.start)
        #expect(receive5 == .take)
        #expect(machine.mayAnswerHere(writable: true), "the router has answered everything before it")
        #expect(!machine.mayAnswerHere(writable: false), "not to a client that is not reading")
    }

    @Test("while a write is with the store nothing is read or taken; what came meanwhile is taken in order after its answer")
    func writeParksWhatFollows() {
        var machine = Self.serving()
        let receive1 = machine.receive(Self.head, now: Self.start)
        #expect(receive1 == .take)
        let receive2 = machine.receive(Self.body, now: Self.start)
        #expect(receive2 == .take)
        let receive3 = machine.receive(Self.end, now: Self.start)
        #expect(receive3 == .take)
        machine.startWrite()
        let readRequested0 = machine.readRequested()
        #expect(readRequested0, "nothing parked: the socket stays registered for reading")
        let second = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/second"))
        let receive4 = machine.receive(second, now: Self.start)
        #expect(receive4 == .park)
        let receive5 = machine.receive(Self.end, now: Self.start)
        #expect(receive5 == .park)
        let readRequested1 = machine.readRequested()
        #expect(!readRequested1, "with something parked the socket is not read again during the write")
        let unpark1 = machine.unpark()
        #expect(unpark1 == nil, "not while the write is with the store")
        let takePendingRead1 = machine.takePendingRead()
        #expect(!takePendingRead1)
        let finishWrite1 = machine.finishWrite()
        #expect(finishWrite1)
        let endLocalAnswer1 = machine.endLocalAnswer(now: Self.start)
        #expect(endLocalAnswer1 == .none, "the idle timer set at activation is still out")
        let unpark2 = machine.unpark()
        #expect(unpark2 == second)
        #expect(machine.mayAnswerHere(writable: true), "nothing with the router: the event loop may take it too")
        let unpark3 = machine.unpark()
        #expect(unpark3 == Self.end)
        let unpark4 = machine.unpark()
        #expect(unpark4 == nil)
        let takePendingRead2 = machine.takePendingRead()
        #expect(takePendingRead2, "the read asked for during the write is made now")
        let takePendingRead3 = machine.takePendingRead()
        #expect(!takePendingRead3, "once")
        let readRequested2 = machine.readRequested()
        #expect(readRequested2)
    }

    @Test("a second write taken from what was parked stops the unparking until it is answered")
    func secondWriteFromParked() {
        var machine = Self.serving()
        _ = machine.receive(Self.head, now: Self.start)
        _ = machine.receive(Self.end, now: Self.start)
        machine.startWrite()
        for part in [Self.head, Self.end, Self.head, Self.end] {
            let receipt = machine.receive(part, now: Self.start)
            #expect(receipt == .park)
        }
        let finishWrite1 = machine.finishWrite()
        #expect(finishWrite1)
        _ = machine.endLocalAnswer(now: Self.start)
        let unpark1 = machine.unpark()
        #expect(unpark1 == Self.head)
        let unpark2 = machine.unpark()
        #expect(unpark2 == Self.end)
        machine.startWrite()
        let unpark3 = machine.unpark()
        #expect(unpark3 == nil, "the third request waits for the second write")
        let finishWrite2 = machine.finishWrite()
        #expect(finishWrite2)
        _ = machine.endLocalAnswer(now: Self.start)
        let unpark4 = machine.unpark()
        #expect(unpark4 == Self.head)
        let unpark5 = machine.unpark()
        #expect(unpark5 == Self.end)
    }

    @Test("a write the store answers after the connection closed is not answered")
    func writeAfterClose() {
        var machine = Self.serving()
        _ = machine.receive(Self.head, now: Self.start)
        _ = machine.receive(Self.end, now: Self.start)
        machine.startWrite()
        _ = machine.receive(Self.head, now: Self.start)
        let deactivate1 = machine.deactivate()
        #expect(deactivate1)
        let finishWrite1 = machine.finishWrite()
        #expect(!finishWrite1)
        let unpark1 = machine.unpark()
        #expect(unpark1 == nil)
    }

    @Test("a read the views missed loads its config's view when the router answers it 200 or 304, and only then")
    func routedReadWantsItsView() throws {
        let config = try ConfigName("app")
        var machine = Self.serving()
        Self.routeRequest(&machine, wantingViewOf: config)
        #expect(machine.routedHead(status: .notFound).wantView == nil)
        #expect(machine.routedHead(status: .ok) == .init(wantView: config, closing: false))
        #expect(machine.routedHead(status: .notModified) == .init(wantView: config, closing: false), "a conditional read that found the key")
        _ = machine.endRoutedAnswer(now: Self.start)
        Self.routeRequest(&machine)
        #expect(machine.routedHead(status: .ok).wantView == nil, "the next request wants none")
    }

    @Test("a read's end flushes the answers given here, and tells the router's channel only when it was handed something")
    func readComplete() {
        var machine = Self.serving()
        let readComplete1 = machine.readComplete()
        #expect(readComplete1 == .init(flush: false, fireReadComplete: false))
        _ = machine.receive(Self.head, now: Self.start)
        _ = machine.receive(Self.end, now: Self.start)
        _ = machine.endLocalAnswer(now: Self.start)
        let readComplete2 = machine.readComplete()
        #expect(readComplete2 == .init(flush: true, fireReadComplete: false))
        Self.routeRequest(&machine)
        let readComplete3 = machine.readComplete()
        #expect(readComplete3 == .init(flush: false, fireReadComplete: true))
        let readComplete4 = machine.readComplete()
        #expect(readComplete4 == .init(flush: false, fireReadComplete: false))
    }

    @Test("what ends the input during a write (its end, bytes the codec cannot read) is held, in order, until its answer")
    func inputEndWaitsForTheWrite() {
        struct Unreadable: Error {}
        var machine = Self.serving()
        let idle = machine.inputEnded(.closed)
        #expect(!idle, "no write with the store: passed on at once")
        _ = machine.receive(Self.head, now: Self.start)
        _ = machine.receive(Self.end, now: Self.start)
        machine.startWrite()
        let heldError = machine.inputEnded(.failed(Unreadable()))
        let held = machine.inputEnded(.closed)
        #expect(heldError && held, "held during the write")
        let early = machine.takeHeldInputEnd()
        #expect(early == nil, "not while the write is with the store")
        let finished = machine.finishWrite()
        #expect(finished)
        let first = machine.takeHeldInputEnd()
        let second = machine.takeHeldInputEnd()
        if case .failed(let error) = first { #expect(error is Unreadable) } else { Issue.record("the codec's error first: \(String(describing: first))") }
        if case .closed = second {} else { Issue.record("then the end of input: \(String(describing: second))") }
        let again = machine.takeHeldInputEnd()
        #expect(again == nil, "once")
    }
}
