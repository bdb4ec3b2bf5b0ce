import Foundation

/// An event the test queued for the extension, before it is handed out.
struct PendingExtensionEvent: Sendable {
    let kind: ExtensionsAPIEmulator.EventKind
    /// The INVOKE's request id; empty for SHUTDOWN.
    let requestID: String
    let body: Data
    let queuedAt: ContinuousClock.Instant
}

/// The Extensions API emulator's book-keeping: registrations, queued events, waiting
/// `event/next` requests, deliveries and every call in order. Continuations are resumed
/// only after the state is updated, and a cancelled waiter is removed before it is resumed,
/// so each is resumed exactly once.
actor ExtensionsAPIState {
    private var queue: [PendingExtensionEvent] = []
    private let pollers = Waiters<PendingExtensionEvent>()
    private var stopped = false
    private var shutDown = false
    /// Index in `deliveries` of the event handed out last, whose follow-up next is awaited.
    private var awaitingFollowUp: Int?
    private(set) var registrations: [ExtensionsAPIEmulator.Registration] = []
    private(set) var deliveries: [ExtensionsAPIEmulator.Delivery] = []
    private(set) var calls: [ExtensionsAPIEmulator.Call] = []
    private(set) var errors: [ExtensionsAPIEmulator.ReportedError] = []
    private(set) var violations: [String] = []
    /// How long every answer waits before it is sent.
    private(set) var answerDelay: Duration = .zero

    func setAnswerDelay(_ delay: Duration) {
        answerDelay = delay
    }

    func record(_ route: ExtensionsAPIEmulator.Route, identifier: String?) {
        calls.append(ExtensionsAPIEmulator.Call(route: route, identifier: identifier, at: .now))
    }

    /// Registers `name`; returns the identifier, or nil (and a violation) for a bad request.
    func register(name: String?, events: [String]?) -> String? {
        guard let name, !name.isEmpty else {
            violations.append("register without Lambda-Extension-Name")
            return nil
        }
        guard let events, !events.isEmpty, events.allSatisfy({ $0 == "INVOKE" || $0 == "SHUTDOWN" }) else {
            violations.append("register of \(name) with events \(events ?? []): not a list of INVOKE and SHUTDOWN")
            return nil
        }
        let identifier = UUID().uuidString.lowercased()
        registrations.append(ExtensionsAPIEmulator.Registration(name: name, events: events, identifier: identifier, at: .now))
        return identifier
    }

    /// Whether `identifier` came from a registration; records a violation naming `route` when not.
    func knows(_ identifier: String?, route: ExtensionsAPIEmulator.Route) -> Bool {
        if let identifier, registrations.contains(where: { $0.identifier == identifier }) { return true }
        violations.append("\(route) with \(identifier.map { "unknown identifier \($0)" } ?? "no Lambda-Extension-Identifier")")
        return false
    }

    func enqueue(_ event: PendingExtensionEvent) throws {
        guard !stopped else { throw ExtensionsAPIEmulator.Failure(description: "the Extensions API emulator was stopped") }
        if pollers.isEmpty {
            queue.append(event)
        } else {
            deliver(event, at: .now)
            pollers.resumeFirst(returning: event)
        }
    }

    private func deliver(_ event: PendingExtensionEvent, at now: ContinuousClock.Instant) {
        deliveries.append(ExtensionsAPIEmulator.Delivery(
            kind: event.kind, requestID: event.requestID, queuedAt: event.queuedAt, deliveredAt: now, nextRequestAt: nil
        ))
        awaitingFollowUp = deliveries.count - 1
        if event.kind == .shutdown { shutDown = true }
    }

    /// The next event for an `event/next` request, waiting for one if none is queued.
    func next() async throws -> PendingExtensionEvent {
        let now = ContinuousClock.now
        if let index = awaitingFollowUp {
            deliveries[index].nextRequestAt = now
            awaitingFollowUp = nil
        }
        guard !stopped else { throw ExtensionsAPIEmulator.Failure(description: "the Extensions API emulator was stopped") }
        if shutDown { violations.append("event/next after SHUTDOWN was delivered") }
        if !queue.isEmpty {
            let event = queue.removeFirst()
            deliver(event, at: now)
            return event
        }
        return try await pollers.wait()
    }

    func recordError(_ error: ExtensionsAPIEmulator.ReportedError) {
        errors.append(error)
    }

    func summary() -> String {
        var parts = [
            "\(registrations.count) registration(s)",
            "calls: \(calls.map { "\($0.route)" }.joined(separator: ", "))",
            "\(deliveries.count) event(s) delivered",
        ]
        for error in errors { parts.append("\(error.route) \(error.type): \(error.message)") }
        if !violations.isEmpty { parts.append("protocol violations: \(violations.joined(separator: "; "))") }
        return parts.joined(separator: ", ")
    }

    func stop() {
        stopped = true
        let failure = ExtensionsAPIEmulator.Failure(description: "the Extensions API emulator was stopped")
        pollers.failAll(failure)
    }
}
