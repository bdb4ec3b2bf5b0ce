/// The instant by which a request must be answered, known to everything that serves it.
///
/// Each face computes it from its transport and the pipeline binds it around the store
/// step (`Pipeline.perform`, in `DiscfgService`), and the store reads it: a store that
/// retries fits its retries and their waits inside it, and one that cannot finish in time
/// fails with ``exceeded`` (`unavailable`) instead of holding the caller past the answer
/// it is owed.
///
/// ```swift
/// try await Deadline.within(.after(.seconds(30))) {
///     try await store.set(key, value, in: config)
/// }
/// ```
public struct Deadline: Sendable, Hashable, Comparable {
    /// When the request must be answered.
    public var instant: ContinuousClock.Instant

    /// The deadline at `instant`.
    public init(_ instant: ContinuousClock.Instant) {
        self.instant = instant
    }

    /// The deadline `duration` from now.
    public static func after(_ duration: Duration) -> Deadline {
        Deadline(.now + duration)
    }

    /// How long is left; zero or less once it has passed.
    public var remaining: Duration { instant - .now }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.instant < rhs.instant }

    /// The deadline of the request the current task serves; nil outside one.
    @TaskLocal public static var current: Deadline?

    /// Runs `body` with `deadline` as the current deadline, or with the current one when
    /// that is earlier: a request's deadline is never extended by what it calls.
    public static func within<T>(_ deadline: Deadline, _ body: () async throws -> T) async rethrows -> T {
        // An earlier deadline already in force stays, and binding it again would only
        // cost a task-local push on every call (the etcd API sets one per call and its
        // backend another).
        if let current, current <= deadline { return try await body() }
        return try await $current.withValue(deadline) { try await body() }
    }

    /// The failure of work the current deadline cut short before it was done: nothing
    /// the caller asked for was changed (a store whose write may have gone through says
    /// so itself, with field `outcome`).
    public static func exceeded(_ what: String = "the request") -> DiscfgError {
        DiscfgError(.unavailable, "\(what) did not finish within its deadline; try again later", field: "timeout")
    }
}
