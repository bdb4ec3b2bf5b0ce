import DiscfgCore
import Synchronization
import Testing

/// The store's background loops (the change poller and the expiry sweeper) run on
/// demand: only while someone watches, and never past the life of the store that owns
/// them. A loop that kept going would poll a file or a table forever for nobody.
@Suite("Background loops stop with their watchers and their owner")
struct BackgroundLoopTests {
    /// Counts how often a loop ran.
    final class Runs: Sendable {
        private let count = Atomic(0)
        func tick() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }

        /// Waits until the loop has run more than `count` times; false if it never does.
        func exceed(_ count: Int) async -> Bool {
            for _ in 0..<500 where value <= count { try? await Task.sleep(for: .milliseconds(10)) }
            return value > count
        }

        /// Waits until the loop stops running (no run for 20 of its intervals); false if
        /// it keeps running.
        func settle(interval: Duration) async -> Bool {
            var last = value
            var quiet = 0
            for _ in 0..<400 {
                try? await Task.sleep(for: interval)
                if value == last { quiet += 1 } else { (last, quiet) = (value, 0) }
                if quiet >= 20 { return true }
            }
            return false
        }
    }

    static let interval = Duration.milliseconds(5)

    @Test("the poller runs while a watcher is subscribed and stops when the last one leaves")
    func pollerStopsWithLastWatcher() async {
        let runs = Runs()
        let notifier = ChangeNotifier(pollInterval: Self.interval) { runs.tick(); return false }
        let config = try! ConfigName("app")
        #expect(await runs.settle(interval: Self.interval) && runs.value == 0, "it polled with nobody watching")
        let watcher = Task { for await _ in notifier.subscribe(config).wakeUps {} }
        #expect(await runs.exceed(3))
        watcher.cancel()
        #expect(await runs.settle(interval: Self.interval), "it kept polling after the last watcher left")
        #expect(notifier.subscriberCount == 0)
        // A new watcher starts it again.
        let before = runs.value
        let again = Task { for await _ in notifier.subscribe(config).wakeUps {} }
        #expect(await runs.exceed(before + 3))
        again.cancel()
        #expect(await runs.settle(interval: Self.interval))
    }

    @Test("the poller stops when its notifier is released, even with a watcher still subscribed")
    func pollerStopsWithOwner() async {
        let runs = Runs()
        var notifier: ChangeNotifier? = ChangeNotifier(pollInterval: Self.interval) { runs.tick(); return false }
        let stream = notifier!.subscribe(try! ConfigName("app"))
        #expect(await runs.exceed(3))
        notifier = nil
        #expect(await runs.settle(interval: Self.interval), "the poller outlived its notifier")
        _ = stream
    }

    @Test("the sweeper sweeps while someone watches, once at a time, and stops when they leave")
    func sweeperStopsWithLastWatcher() async {
        let runs = Runs()
        let notifier = ChangeNotifier()
        let sweeper = ExpirySweeper(interval: Self.interval)
        let watcher = Task { for await _ in notifier.subscribe(try! ConfigName("app")).wakeUps {} }
        while notifier.subscriberCount == 0 { await Task.yield() }
        let running = Atomic(0)
        let overlapped = Atomic(false)
        let sweep: @Sendable () async -> Void = {
            if running.add(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
            runs.tick()
            try? await Task.sleep(for: .milliseconds(1))
            running.subtract(1, ordering: .relaxed)
        }
        sweeper.ensureRunning(while: notifier, sweep: sweep)
        sweeper.ensureRunning(while: notifier, sweep: sweep)
        #expect(await runs.exceed(5))
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap, "two sweeps ran at once")
        watcher.cancel()
        #expect(await runs.settle(interval: Self.interval), "it kept sweeping after the last watcher left")
    }

    @Test("the sweeper stops when it is released, even with a watcher still subscribed")
    func sweeperStopsWithOwner() async {
        let runs = Runs()
        let notifier = ChangeNotifier()
        var sweeper: ExpirySweeper? = ExpirySweeper(interval: Self.interval)
        let stream = notifier.subscribe(try! ConfigName("app"))
        sweeper!.ensureRunning(while: notifier) { runs.tick() }
        #expect(await runs.exceed(3))
        sweeper = nil
        #expect(await runs.settle(interval: Self.interval), "the sweeper outlived its owner")
        _ = stream
    }
}
