import NIOCore

/// Runs tasks on one NIO event loop. A connection's requests run on the loop that reads
/// them, so an answer is written without a hop to Swift's cooperative pool and back;
/// the store's reads then run on that loop too (they take microseconds and never sync)
/// and its writes wait for the writer without blocking it.
///
/// ```swift
/// Task(executorPreference: EventLoopExecutor(context.eventLoop)) { … }
/// ```
public final class EventLoopExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `loop` is immutable and event loops are thread-safe.
    private let loop: any EventLoop

    /// The executor of `loop`.
    public init(_ loop: any EventLoop) {
        self.loop = loop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
