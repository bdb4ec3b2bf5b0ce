/// How many events a watcher reads from history at a time.
let watchBatchSize = 500

/// How long each of a watch's reads may take: a store that stops answering (a DynamoDB
/// endpoint gone silent) ends its watches with `unavailable` within it, instead of after
/// every retry of its client, so the server's read views stop answering from what they
/// last knew and callers are told the store is unavailable.
public let watchReadTimeout = Duration.seconds(5)

extension ConfigReading {
    /// Builds a watch from ``events(in:scope:from:limit:)`` and wake-ups: read every
    /// event from the start revision on, then sleep until woken and read again.
    ///
    /// Because each read starts right after the last revision accounted for, an event
    /// is delivered exactly once however wake-ups arrive. Subscribe before
    /// calling so no change between subscribing and the first read is missed. When this
    /// process deletes the config, the watch ends with `configNotFound`, even if a config
    /// of the same name is created before it reads again.
    public func followEvents(
        _ config: ConfigName, scope: WatchScope, from: Revision?, subscription: ChangeNotifier.Subscription
    ) -> AsyncThrowingStream<Event, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var next: Revision
                    if let from { next = from } else { next = try await Deadline.within(.after(watchReadTimeout)) { try await configInfo(config) }.revision.next }
                    var wakeIterator = subscription.wakeUps.makeAsyncIterator()
                    while !Task.isCancelled {
                        if subscription.configDeleted { throw DiscfgError.configNotFound(config) }
                        let batch = try await Deadline.within(.after(watchReadTimeout)) {
                            try await events(in: config, scope: scope, from: next, limit: watchBatchSize)
                        }
                        if subscription.configDeleted { throw DiscfgError.configNotFound(config) }
                        for event in batch.events { continuation.yield(event) }
                        next = Swift.max(next, batch.through.next)
                        if batch.hasMore { continue }
                        guard await wakeIterator.next() != nil || subscription.configDeleted else { break }
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
