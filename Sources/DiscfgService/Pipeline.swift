import DiscfgCore
import Synchronization

/// The one chain every face runs an operation through: the gate, then the operation
/// within the request's deadline and with its changes attributed to the caller, then its
/// failure shown as the caller may see it. A face decodes a request to an ``Action``
/// and its caller, computes its deadline from its transport, calls
/// ``perform(_:by:message:deadline:writeStart:_:)`` with the store step, and encodes
/// what comes back; it decides none of these itself.
///
/// ```swift
/// let event = try await Pipeline.perform(
///     Action(.set, on: demo, reaching: .key(key)), by: caller, message: "raise the pool", deadline: .after(.seconds(30))
/// ) {
///     try await store.set(key, to: value, in: demo)
/// }
/// ```
public enum Pipeline {
    /// Runs `step` as `action` by `caller`:
    /// 1. the gate judges the operation whole (``Gate``), before anything is read or
    ///    changed;
    /// 2. the step runs with `deadline` as ``Deadline/current`` (the earlier of it and one
    ///    already in force), so a store that retries ends by it; a deadline that passed
    ///    before the step, or before its write began, fails it with `unavailable`
    ///    (field `timeout`) and nothing was written; a write once begun runs to its end
    ///    (``commit(_:)``, ``RequestCutoff``);
    /// 3. a change is recorded as the caller's, with `message` as its reason
    ///    (``Attribution``; reads record nothing);
    /// 4. a refusal of the store (a schema's violations) shows the caller only what it
    ///    may read (``DiscfgError/shown(to:on:)``).
    /// - Parameters:
    ///   - deadline: when the request must be answered, as its transport says (nil: none
    ///     of its own, as a stream's).
    ///   - writeStart: where a write's step begins to change the store: with the step,
    ///     or where the step marks it (``commit(_:)``).
    ///
    /// Inlinable, so each face's call is specialized for what its step returns: called
    /// generically, every write paid for the thunks and frames of an unknown result.
    @inlinable public static func perform<T>(
        _ action: Action, by caller: Caller, message: String? = nil, deadline: Deadline?, writeStart: WriteStart = .withStep,
        _ step: () async throws -> T
    ) async throws -> T {
        try admit(action, by: caller)
        // One frame, its task-locals bound directly around `step`: this is every write's
        // path, and each wrapping closure would cost the hot path an async frame.
        do {
            // The deadline in force: the request's, unless an earlier one is bound already.
            let current = Deadline.current
            let bound = deadline.flatMap { deadline in current.map { $0 <= deadline } == true ? nil : deadline }
            if let effective = bound ?? current, effective.remaining <= .zero { throw Deadline.exceeded() }
            guard action.writes else {
                guard let bound else { return try await step() }
                return try await Deadline.$current.withValue(bound, operation: step)
            }
            if writeStart == .withStep { try cutoff?.writeBegins() }
            let attribution = caller.attribution(message: message)
            guard let bound else { return try await Attribution.$current.withValue(attribution, operation: step) }
            return try await Deadline.$current.withValue(bound) {
                try await Attribution.$current.withValue(attribution, operation: step)
            }
        } catch let error as DiscfgError {
            guard let config = action.config else { throw error }
            throw error.shown(to: caller.grant, on: config)
        }
    }

    /// Judges `action` by `caller` where a face answers from what it holds, with no
    /// store step to run (the event loops' reads from their views, an etcd watch as it
    /// is created): the gate's decision, taken as ``perform(_:by:message:deadline:writeStart:_:)`` takes it.
    public static func admit(_ action: Action, by caller: Caller) throws(DiscfgError) {
        let refusal = Gate.refusal(of: action, for: caller)
        ActionNote.current?.note(action.kind, refused: refusal != nil)
        if observed.load(ordering: .relaxed) { PipelineObservers.shared.record(action, caller, refused: refusal != nil) }
        if let refusal { throw refusal }
    }

    /// Whether anyone observes the pipeline (``observe(config:)``): one load per action
    /// when nobody does.
    static let observed = Atomic<Bool>(false)

    /// Starts recording every action on `config` that passes through the pipeline, from
    /// any face, until the observation ends: how tests show that each face's requests
    /// go through the gate, and once.
    public static func observe(config: ConfigName) -> PipelineObservation {
        PipelineObservers.shared.start(config)
    }
}

/// What a request became, for its audit line: the action the pipeline ran it as (the
/// last, should a face run more than one), and whether the gate refused it. Bound around
/// a request by whichever face writes its line, and filled by the pipeline, so every
/// face's line names its action as the pipeline saw it.
public final class ActionNote: Sendable {
    /// The note of the request the current task answers; nil where no line is written.
    @TaskLocal public static var current: ActionNote?

    private let noted = Mutex<(kind: Action.Kind?, refused: Bool)>((nil, false))

    public init() {}

    /// The action the request was run as; nil when it reached no action (refused before,
    /// or a route of no config's keys that is no action: the console's files).
    public var kind: Action.Kind? { noted.withLock(\.kind) }
    /// Whether the gate refused it.
    public var refused: Bool { noted.withLock(\.refused) }

    func note(_ kind: Action.Kind, refused: Bool) {
        noted.withLock { $0 = (kind, refused) }
    }

    /// Runs `operation`, the answering of one request, with this note as the one the
    /// pipeline fills.
    public func noting<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self, operation: operation)
    }
}

/// The actions on one config that passed through the pipeline since an observation
/// began (``Pipeline/observe(config:)``).
public final class PipelineObservation: Sendable {
    /// One action as the gate judged it.
    public struct Record: Sendable, Hashable {
        public var kind: Action.Kind
        public var caller: String
        public var refused: Bool
    }

    let config: ConfigName
    private let records = Mutex<[Record]>([])

    init(config: ConfigName) {
        self.config = config
    }

    /// What was recorded so far, in order.
    public var recorded: [Record] { records.withLock { $0 } }

    /// Forgets what was recorded so far.
    public func reset() { records.withLock { $0.removeAll() } }

    func append(_ record: Record) { records.withLock { $0.append(record) } }

    /// Stops recording.
    public func end() { PipelineObservers.shared.stop(self) }
}

/// The observations under way.
final class PipelineObservers: Sendable {
    static let shared = PipelineObservers()
    private let observations = Mutex<[PipelineObservation]>([])

    func start(_ config: ConfigName) -> PipelineObservation {
        let observation = PipelineObservation(config: config)
        observations.withLock { $0.append(observation) }
        Pipeline.observed.store(true, ordering: .relaxed)
        return observation
    }

    func stop(_ observation: PipelineObservation) {
        observations.withLock { list in
            list.removeAll { $0 === observation }
            if list.isEmpty { Pipeline.observed.store(false, ordering: .relaxed) }
        }
    }

    func record(_ action: Action, _ caller: Caller, refused: Bool) {
        guard let config = action.config else { return }
        let matching = observations.withLock { $0.filter { $0.config == config } }
        for observation in matching { observation.append(PipelineObservation.Record(kind: action.kind, caller: caller.name, refused: refused)) }
    }
}

extension Action {
    /// A transaction on `config`: every key, prefix and range it compares or reads as a
    /// read, every one it puts, patches or deletes as a write, in both branches of it and
    /// of every transaction nested in it, so the gate judges all the tree may reach.
    public static func txn(_ transaction: Transaction, on config: ConfigName) -> Action {
        let filter = transaction.keyFilter
        func target(_ subject: Comparison.Subject) -> Target {
            switch subject {
            case .key(let key): .key(key)
            case .prefix(let prefix): .prefix(prefix)
            case .range(let range): .range(range, reaching: filter)
            }
        }
        var parts: [Part] = []
        func add(_ transaction: Transaction) {
            parts += transaction.compares.map { Part(.read, target($0.subject)) }
            for step in transaction.success + transaction.failure {
                switch step {
                case .get(let key): parts.append(Part(.read, .key(key)))
                case .getPrefix(let prefix): parts.append(Part(.read, .prefix(prefix)))
                case .getRange(let range): parts.append(Part(.read, .range(range, reaching: filter)))
                case .put(let key, _, _, _), .patch(let key, _), .delete(let key): parts.append(Part(.write, .key(key)))
                case .deletePrefix(let prefix): parts.append(Part(.write, .prefix(prefix)))
                case .deleteRange(let range): parts.append(Part(.write, .range(range, reaching: filter)))
                case .nested(let nested): add(nested)
                }
            }
        }
        add(transaction)
        return Action(.txn, on: config, parts: parts)
    }

    /// An import of `snapshot` into `config`: each of its keys written; one that replaces
    /// (deleting every key under its prefix it does not name) reaches that whole prefix.
    public static func importing(_ snapshot: ConfigSnapshot, _ options: ImportOptions, on config: ConfigName) -> Action {
        if options.replace { return Action(.importSnapshot, on: config, reaching: .prefix(options.prefix)) }
        return Action(.importSnapshot, on: config, parts: snapshot.items.map { Part(.write, .key($0.key)) })
    }
}
