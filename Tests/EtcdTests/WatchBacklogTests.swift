import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import GRPCCore
import Synchronization
import Testing

/// A watcher whose client stops reading holds at most its backlog of events, then lets
/// them go and, once the client reads again, catches up from history: every revision
/// arrives once, in order, or, when history was compacted meanwhile, etcd's compacted
/// cancel. Driven through the Watch service itself over a real SQLite file, with a
/// response writer that stalls like a client that does not read.
@Suite("etcd Watch: a slow client's backlog")
struct WatchBacklogTests {
    @Test("the queue holds at most its budget, then reports the overflow and starts again")
    func queueBound() throws {
        let queue = EventQueue(maxBytes: 1_000)
        let key = try Key("/k")
        func event(_ revision: UInt64) -> Event {
            let item = Item(key: key, value: Data(repeating: 1, count: 98), version: revision, createRevision: 1, modRevision: Revision(revision), modifiedAt: Date(), expiresAt: nil)
            return Event(kind: .put, revision: Revision(revision), key: key, at: Date(), item: item, prevItem: nil)
        }
        for revision: UInt64 in 1...9 { queue.push(event(revision)) }
        #expect(queue.peakBytes == 9 * PageBudget.size(event(1)))
        queue.push(event(10))
        queue.push(event(11))
        let first = queue.takeAll()
        #expect(first.overflowed)
        #expect(first.events.isEmpty)
        #expect(queue.peakBytes <= 1_000)
        queue.push(event(12))
        let second = queue.takeAll()
        #expect(!second.overflowed)
        #expect(second.events.map(\.revision) == [Revision(12)])
    }

    @Test("one stream's watchers hold their backlog together: past it the one that pushes overflows, and what it held goes back")
    func sharedBacklog() throws {
        let key = try Key("/k")
        func event(_ revision: UInt64) -> Event {
            let item = Item(key: key, value: Data(repeating: 1, count: 98), version: revision, createRevision: 1, modRevision: Revision(revision), modifiedAt: Date(), expiresAt: nil)
            return Event(kind: .put, revision: Revision(revision), key: key, at: Date(), item: item, prevItem: nil)
        }
        let size = PageBudget.size(event(1))
        let backlog = Budget(limit: 10 * size)
        var first: EventQueue? = EventQueue(maxBytes: 10 * size, shared: backlog)
        let second = EventQueue(maxBytes: 10 * size, shared: backlog)
        for revision: UInt64 in 1...6 { first?.push(event(revision)) }
        for revision: UInt64 in 1...3 { second.push(event(revision)) }
        #expect(backlog.current == 9 * size)
        second.push(event(4))
        second.push(event(5))
        // The second queue passed what the stream has room for: it let go of its own.
        #expect(backlog.current == 6 * size)
        let taken = second.takeAll()
        #expect(taken.overflowed && taken.events.isEmpty)
        #expect(first?.takeAll().events.count == 6)
        #expect(backlog.current == 0)
        first?.push(event(7))
        #expect(backlog.current == size)
        // A watcher that ends gives back what its queue held.
        first = nil
        #expect(backlog.current == 0)
    }

    @Test("watchers open on the server are bounded: a create past the limit is refused with a reason, and a cancel or a closed stream makes room")
    func watcherLimit() async throws {
        try await withBackend { backend, config in
            let open = Budget(limit: 2)
            let service = EtcdWatchService(backend: backend, identity: EtcdIdentity(config: config), openWatchers: open)
            let writer = StallingWriter(passing: Int.max)
            let (requests, continuation) = AsyncThrowingStream<Etcdserverpb_WatchRequest, any Error>.makeStream()
            func create() -> Etcdserverpb_WatchRequest {
                var request = Etcdserverpb_WatchRequest()
                request.createRequest.key = Data("w/".utf8)
                return request
            }
            let watch = Task {
                try await withServerContextRPCCancellationHandle { handle in
                    let context = ServerContext(descriptor: Etcdserverpb_Watch.Method.Watch.descriptor, remotePeer: "test", localPeer: "test", cancellation: handle)
                    try await service.watch(request: RPCAsyncSequence(wrapping: requests), response: RPCWriter(wrapping: writer), context: context)
                }
            }
            for _ in 0..<3 { continuation.yield(create()) }
            // Both watchers said `created` (a watcher cancelled before it started would
            // never say it), and the third create was refused.
            let refused = try await writer.waitFor { responses in
                responses.filter { $0.created && !$0.canceled }.count == 2 ? responses.first { $0.canceled } : nil
            }
            #expect(refused.created && refused.watchID == 2)
            #expect(refused.cancelReason.contains("too many watchers open on this server (2)"))
            #expect(open.current == 2)
            var cancel = Etcdserverpb_WatchRequest()
            cancel.cancelRequest.watchID = 0
            continuation.yield(cancel)
            continuation.yield(create())
            let again = try await writer.waitFor { responses in responses.dropFirst(3).first { $0.created && !$0.canceled } }
            #expect(again.watchID == 3)
            #expect(try await writer.waitFor { $0 }.contains { $0.canceled && !$0.created && $0.watchID == 0 }, "the cancel was answered")
            #expect(open.current == 2)
            continuation.finish()
            _ = try? await watch.value
            #expect(open.current == 0)
        }
    }

    @Test("creates on one stream are answered `created` in the order they came (etcd clients match each to their oldest pending create)")
    func createdInOrder() async throws {
        try await withBackend { backend, config in
            let service = EtcdWatchService(backend: backend, identity: EtcdIdentity(config: config), openWatchers: Budget(limit: 100))
            let writer = StallingWriter(passing: Int.max)
            let (requests, continuation) = AsyncThrowingStream<Etcdserverpb_WatchRequest, any Error>.makeStream()
            for index in 0..<50 {
                var request = Etcdserverpb_WatchRequest()
                request.createRequest.key = Data("w/\(index)".utf8)
                continuation.yield(request)
            }
            let watch = Task {
                try await withServerContextRPCCancellationHandle { handle in
                    let context = ServerContext(descriptor: Etcdserverpb_Watch.Method.Watch.descriptor, remotePeer: "test", localPeer: "test", cancellation: handle)
                    try await service.watch(request: RPCAsyncSequence(wrapping: requests), response: RPCWriter(wrapping: writer), context: context)
                }
            }
            let created = try await writer.waitFor { responses in responses.count >= 50 ? responses : nil }
            #expect(created.map(\.watchID) == Array(0..<50))
            #expect(created.allSatisfy { $0.created && !$0.canceled })
            continuation.finish()
            _ = try? await watch.value
        }
    }

    @Test("a stalled client gets every revision once, in order, after 40 times its backlog went by")
    func catchesUp() async throws {
        try await withWatch(backlogBytes: 4_096) { fixture in
            for index in 0..<400 {
                _ = try await fixture.backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("w/\(index % 50)".utf8)), Data(repeating: 7, count: 400))]))
            }
            // The watcher read the first revision and is stuck sending it; the rest went
            // past a 4 KiB backlog while the client was not reading.
            try await Task.sleep(for: .milliseconds(500))
            fixture.writer.open()
            let responses = try await fixture.writer.waitFor { responses in
                responses.flatMap(\.events).count >= 400 ? responses : nil
            }
            let revisions = responses.flatMap(\.events).map(\.kv.modRevision)
            #expect(revisions == Array(2...401), "revision 1 is the config's start, as etcd's")
            #expect(responses.allSatisfy { !$0.canceled })
        }
    }

    @Test("a stalled client whose gap was compacted meanwhile gets etcd's compacted cancel")
    func compactedWhileStalled() async throws {
        try await withWatch(backlogBytes: 4_096) { fixture in
            for index in 0..<100 {
                _ = try await fixture.backend.transact(Transaction(success: [.put(try EtcdKeys.key(Array("w/\(index)".utf8)), Data(repeating: 7, count: 400))]))
            }
            try await Task.sleep(for: .milliseconds(500))
            _ = try await fixture.backend.compact(90)
            fixture.writer.open()
            let cancel = try await fixture.writer.waitFor { responses in responses.first { $0.canceled } }
            #expect(cancel.compactRevision == 90)
            #expect(cancel.cancelReason == EtcdError.compacted.message)
        }
    }

    // MARK: Fixture

    struct Fixture {
        let backend: EtcdBackend
        let writer: StallingWriter
    }

    /// A watch of `w/…` from revision 1 on a fresh SQLite store, whose client reads the
    /// `created` response and then nothing until `writer.open()`.
    func withWatch(backlogBytes: Int, _ body: (Fixture) async throws -> Void) async throws {
        try await withBackend { backend, config in
            let writer = StallingWriter(passing: 1)
            try await Self.watching(backend, config, from: 1, backlogBytes: backlogBytes, writer) {
                defer { writer.open() }
                _ = try await writer.waitFor { $0.first { $0.created } }
                try await body(Fixture(backend: backend, writer: writer))
            }
        }
    }

    /// Runs `body` while a watch of `w/…` from `revision`, its backlog `backlogBytes`,
    /// writes its responses to `writer`; the watch ends with `body`.
    static func watching(
        _ backend: EtcdBackend, _ config: ConfigName, from revision: Int64, backlogBytes: Int = 1 << 20, _ writer: StallingWriter,
        _ body: () async throws -> Void
    ) async throws {
        let service = EtcdWatchService(backend: backend, identity: EtcdIdentity(config: config), backlogBytes: backlogBytes, openWatchers: Budget(limit: 10))
        let (requests, continuation) = AsyncThrowingStream<Etcdserverpb_WatchRequest, any Error>.makeStream()
        var create = Etcdserverpb_WatchCreateRequest()
        create.key = Data("w/".utf8)
        create.rangeEnd = Data("w0".utf8)
        create.startRevision = revision
        var request = Etcdserverpb_WatchRequest()
        request.createRequest = create
        continuation.yield(request)
        let watch = Task {
            try await withServerContextRPCCancellationHandle { handle in
                let context = ServerContext(descriptor: Etcdserverpb_Watch.Method.Watch.descriptor, remotePeer: "test", localPeer: "test", cancellation: handle)
                try await service.watch(request: RPCAsyncSequence(wrapping: requests), response: RPCWriter(wrapping: writer), context: context)
            }
        }
        defer {
            continuation.finish()
            watch.cancel()
        }
        try await body()
    }

    /// The etcd API's backend over config `etcd` of a fresh SQLite file, removed after `body`.
    func withBackend(_ body: (EtcdBackend, ConfigName) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("etcd.db").path)
        let config = try ConfigName("etcd")
        let backend = EtcdBackend(store: store, config: config)
        try await backend.prepare()
        try await body(backend, config)
    }
}

/// A response writer that takes the first `passing` responses, then holds every write
/// until ``open()`` (a client that stopped reading), and records what it was given.
final class StallingWriter: RPCWriterProtocol, Sendable {
    private struct State {
        var responses: [Etcdserverpb_WatchResponse] = []
        var passing: Int
        var isOpen = false
        var held: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Mutex<State>

    init(passing: Int) {
        state = Mutex(State(passing: passing))
    }

    func write(_ element: Etcdserverpb_WatchResponse) async throws {
        await withCheckedContinuation { continuation in
            let pass = state.withLock { state -> Bool in
                if state.isOpen || state.passing > 0 {
                    state.passing -= 1
                    return true
                }
                state.held.append(continuation)
                return false
            }
            if pass { continuation.resume() }
        }
        state.withLock { $0.responses.append(element) }
    }

    func write(contentsOf elements: some Sequence<Etcdserverpb_WatchResponse>) async throws {
        for element in elements { try await write(element) }
    }

    /// Lets every held and later write through.
    func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// What `found` finds in the responses so far, waiting up to 60 s for it.
    func waitFor<T>(_ found: ([Etcdserverpb_WatchResponse]) -> T?) async throws -> T {
        try await eventually("the awaited watch responses", timeout: .seconds(60)) { found(state.withLock { $0.responses }) }
    }
}
