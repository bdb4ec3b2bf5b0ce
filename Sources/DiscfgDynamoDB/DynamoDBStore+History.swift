import DiscfgAWS
import DiscfgCore
import Foundation

/// An event read from its key's chain: its place and links (nil: written before chains).
struct ChainedEvent: Sendable {
    let place: EventPlace
    let event: Event
    let links: EventLinks?

    /// Whether events of the key older than this one may be only in the `byKey` index of
    /// a table made before chains: the event has no links, or starts its chain.
    var mayContinueInIndex: Bool { links?.back.isEmpty ?? true }
}

extension DynamoDBStore {
    /// The key item and tombstone of `key` as stored, strongly consistent, with the meta
    /// item when `meta` (one `BatchGetItem`).
    func storedKeyHeads(_ key: Key, in config: ConfigName, meta: Bool) async throws -> (meta: ConfigMeta?, item: Attributes?, tombstone: Attributes?) {
        let itemKey = DynamoDBLayout.itemKey(config, key)
        let tombstoneKey = DynamoDBLayout.tombstoneKey(config, key)
        let found = try await connection.batchGet((meta ? [DynamoDBLayout.metaKey(config)] : []) + [itemKey, tombstoneKey], consistent: true)
        let item = found.first { $0[.pk] == itemKey[.pk] && $0[.sk] == itemKey[.sk] }
        let tombstone = found.first { $0[.pk] == tombstoneKey[.pk] }
        return (found.compactMap(ConfigMeta.init).first, item, tombstone)
    }

    /// The events at these places, by place, with overflowed values put back.
    func chainedEvents(_ places: [EventPlace], in config: ConfigName) async throws -> [EventPlace: ChainedEvent] {
        var found: [EventPlace: ChainedEvent] = [:]
        for (sk, (event, attributes)) in try await eventItems(places.map(\.sortKey), in: config) {
            guard let place = EventPlace(sortKey: sk) else { continue }
            found[place] = ChainedEvent(place: place, event: event, links: EventLinks(attributes))
        }
        return found
    }

    /// The oldest retained event on the key whose chain is `chain` with a revision above
    /// `revision`: from the newest event, each step reads the furthest event back that the
    /// links name and that is still above `revision` (O(log n) `GetItem`s).
    func oldestChained(_ chain: DynamoDBKeyChain, in config: ConfigName, after revision: Revision) async throws -> ChainedEvent? {
        guard chain.place.revision > revision, var current = try await chainedEvents([chain.place], in: config)[chain.place] else { return nil }
        walk: while let links = current.links {
            let candidates = ([links.jump].compactMap { $0 } + links.back).filter { $0.revision > revision }.sorted()
            for place in candidates {
                // A missing event was deleted by retention: try a nearer one.
                if let next = try await chainedEvents([place], in: config)[place] {
                    current = next
                    continue walk
                }
            }
            break
        }
        return current
    }

    /// The oldest retained event on `key` after `revision`, by its chain from `item` (its
    /// key item) or `tombstone`, going on in the `byKey` index of a table made before
    /// chains where the chain starts.
    func firstEvent(on key: Key, in config: ConfigName, after revision: Revision, item: Attributes?, tombstone: Attributes?) async throws -> Event? {
        guard let chain = chainHead(key, in: config, item: item, tombstone: tombstone).chain else {
            return try await indexedEvents(key, in: config, from: revision.next, through: Revision(UInt64.max), newestFirst: false, limit: 1).first
        }
        guard let oldest = try await oldestChained(chain, in: config, after: revision) else { return nil }
        if oldest.mayContinueInIndex, oldest.place.revision > revision.next,
           let older = try await indexedEvents(key, in: config, from: revision.next, through: Revision(oldest.place.revision.rawValue - 1), newestFirst: false, limit: 1).first {
            return older
        }
        return oldest.event
    }

    /// Up to `limit` events on `key` with revisions in `from...through` from the `byKey`
    /// index, newest or oldest first; none when the table has no such index (made since
    /// chains), which is then remembered.
    func indexedEvents(_ key: Key, in config: ConfigName, from: Revision, through: Revision, newestFirst: Bool, limit: Int) async throws -> [Event] {
        guard from <= through, limit > 0, keyIndex.withLock({ $0 }) != false else { return [] }
        var input = historyByKey(key, in: config, from: from, through: through, newestFirst: newestFirst, limit: limit)
        input.TableName = connection.table
        let output: QueryOutput
        do {
            output = try await connection.raw("Query", input, as: QueryOutput.self)
        } catch let error as AWSError where Self.lacksIndex(error) {
            keyIndex.withLock { $0 = false }
            return []
        } catch {
            throw connection.mapped(error, operation: "Query")
        }
        keyIndex.withLock { $0 = true }
        connection.estimate.record("Query", read: CapacityEstimate.readUnits(bytes: (output.Items ?? []).reduce(0) { $0 + $1.estimatedSize }, consistent: true))
        let sortKeys = (output.Items ?? []).compactMap { $0[.sk]?.string }.filter { DynamoDBLayout.revision(ofHistorySK: $0) != nil }
        return try await events(at: sortKeys, in: config)
    }

    /// Whether `error` answers a query of an index the table lacks (DynamoDB says
    /// `ValidationException`, emulators `ResourceNotFoundException`, each naming the index).
    static func lacksIndex(_ error: AWSError) -> Bool {
        [.validation, .resourceNotFound].contains(error.code) && error.message.localizedCaseInsensitiveContains("index")
    }

    /// A key's events, newest first, by its chain: the newest event (or, for a page that
    /// starts further back, the walk of ``oldestChained(_:in:after:)``) names the 8 before
    /// it, read with one `BatchGetItem`, whose oldest names the next 8, until the page is
    /// full by count or by bytes. Where the chain starts, a table made before chains goes
    /// on with its `byKey` index.
    public func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        try Limits.validatePageSize(query.limit)
        try Limits.validatePageBytes(query.maxBytes)
        guard let meta = try await historyMeta(config) else { throw DiscfgError.configNotFound(config) }
        let compacted = meta.info.compactedRevision
        let before = query.before.map { $0.rawValue > 0 ? Revision($0.rawValue - 1) : nil } ?? Revision(UInt64.max)
        guard let through = before, through > compacted else {
            return HistoryPage(events: [], nextBefore: nil, compactedRevision: compacted)
        }
        let heads = try await keyHeads(key, in: config, meta: false)
        var found: [Event] = []
        let wanted = query.limit + 1
        // The events the page returns: up to the limit, and within the budget.
        func page() -> [Event] {
            var budget = PageBudget(bytes: query.maxBytes)
            var events: [Event] = []
            for event in found.prefix(query.limit) {
                guard budget.take(PageBudget.size(event)) else { break }
                events.append(event)
            }
            return events
        }
        // Where the walk stands: the places still to read, and the revision below which
        // only the index may hold more.
        var next: [EventPlace] = []
        var indexBelow: Revision?
        if let chain = chainHead(key, in: config, item: heads.item, tombstone: heads.tombstone).chain {
            if chain.place.revision <= through {
                next = [chain.place]
            } else if let first = try await oldestChained(chain, in: config, after: through) {
                if let prev = first.links?.back.first { next = [prev] } else { indexBelow = first.place.revision }
            }
        } else {
            indexBelow = Revision(through.rawValue == UInt64.max ? UInt64.max : through.rawValue + 1)
        }
        // Read on until one event more than the page returns is found, or none is left.
        while found.count < wanted, page().count == found.count {
            let places = next.filter { $0.revision > compacted && $0.revision <= through }
            guard !places.isEmpty else { break }
            let read = try await chainedEvents(places, in: config)
            next = []
            for place in places {
                guard let event = read[place], found.count < wanted else { break }
                found.append(event.event)
                if place == places.last {
                    if event.mayContinueInIndex { indexBelow = place.revision } else { next = event.links?.back ?? [] }
                }
            }
        }
        if found.count < wanted, page().count == found.count, let below = indexBelow, below.rawValue > 0, below > compacted.next {
            // Below the chain's oldest event, but never past the page's start: a page that
            // starts further back than the chain reaches takes the index from `through` on.
            let indexThrough = min(through, Revision(below.rawValue - 1))
            found += try await indexedEvents(key, in: config, from: compacted.next, through: indexThrough, newestFirst: true, limit: wanted - found.count)
        }
        let events = page()
        let more = found.count > events.count
        return HistoryPage(events: events, nextBefore: more ? events.last?.revision : nil, compactedRevision: compacted)
    }
}
