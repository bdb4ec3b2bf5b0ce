import DiscfgCore
import Foundation
import Synchronization

/// What one process — an agent, `serve`, a Lambda instance — has seen of each running
/// deployment: the requests and errors applications report against the version they read
/// (`POST /v1/{config}/health`), and the distinct entities it gave each version. It passes
/// them on as one cumulative ``HealthReport`` per deployment (``flush()``), under a
/// reporter name unique to the process, to the store the monitor reads them from.
///
/// ```swift
/// let counter = HealthCounter(reporter: HealthCounter.reporterName(instance: "web-7"), sink: store)
/// counter.record(config: app, deployment: id, candidate: true, requests: 10, errors: 1)
/// await counter.flush()
/// ```
public final class HealthCounter: Sendable {
    /// The most distinct entities remembered per deployment and version; past it, readers
    /// are counted as at most this many.
    public static let maxRemembered = 100_000
    /// How often a counter with no loop passes its counts on, at most: the Lambda
    /// function's, where one report write per instance per period is the cost.
    public static let defaultInlinePeriod: Duration = .seconds(5)

    /// One deployment's counts in this process.
    struct Tally {
        var stable = HealthReport.Counts()
        var candidate = HealthReport.Counts()
        var stableReaders: Set<String> = []
        var candidateReaders: Set<String> = []
        /// How many times something was counted, and how many of those a flush passed on.
        var counted: UInt64 = 0
        var passed: UInt64 = 0
    }

    struct Slot: Hashable {
        var config: ConfigName
        var deployment: String
    }

    /// The reporter's name in every report: the instance and this process.
    public let reporter: String
    /// Where reports go: the store (`serve`, the Lambda function), or the agent's source;
    /// nil where they cannot go (an agent reading a published snapshot).
    public let sink: (any ConfigStore)?
    /// How long after a flush a report flushes again by itself (``flushIfDue()``); nil
    /// where a loop flushes (``run(every:)``).
    public let inlinePeriod: Duration?
    private let clock: any WallClock
    private let tallies = Mutex<[Slot: Tally]>([:])
    private let lastFlush = Mutex<ContinuousClock.Instant?>(nil)

    /// A counter reporting as `reporter` to `sink`; with `inlinePeriod`, a report flushes
    /// when that long has passed since the last flush (a Lambda function, which runs no loop).
    public init(reporter: String, sink: (any ConfigStore)?, inlinePeriod: Duration? = nil, clock: any WallClock = SystemClock()) {
        self.reporter = reporter
        self.sink = sink
        self.inlinePeriod = inlinePeriod
        self.clock = clock
    }

    /// Flushes when ``inlinePeriod`` has passed since the last flush.
    public func flushIfDue() async {
        guard let inlinePeriod else { return }
        let now = ContinuousClock.now
        let due = lastFlush.withLock { last in
            guard last.map({ now - $0 >= inlinePeriod }) ?? true else { return false }
            last = now
            return true
        }
        if due { await flush() }
    }

    /// A reporter name for `instance` in this process: the instance, `#`, and 8 random
    /// hexadecimal digits, so a process started again begins a new count instead of
    /// lowering the old one. Characters a reporter may not hold become `_`.
    public static func reporterName(instance: String) -> String {
        let cleaned = String(String.UnicodeScalarView(instance.unicodeScalars.map {
            $0 == "/" || $0.properties.generalCategory == .control ? "_" : $0
        }).prefix(100))
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(cleaned.isEmpty ? "discfg" : cleaned)#\(String(repeating: "0", count: 8 - suffix.count))\(suffix)"
    }

    /// Counts `requests` served with one version of `deployment`, `errors` of them failed.
    public func record(config: ConfigName, deployment: String, candidate: Bool, requests: UInt64, errors: UInt64) {
        tallies.withLock { tallies in
            let slot = Slot(config: config, deployment: deployment)
            var tally = tallies[slot] ?? Tally()
            let extra = HealthReport.Counts(requests: requests, errors: errors)
            if candidate { tally.candidate = tally.candidate + extra } else { tally.stable = tally.stable + extra }
            tally.counted += 1
            tallies[slot] = tally
        }
    }

    /// Counts `entity` as a reader of one version of `deployment`.
    public func read(config: ConfigName, deployment: String, candidate: Bool, entity: String) {
        tallies.withLock { tallies in
            let slot = Slot(config: config, deployment: deployment)
            var tally = tallies[slot] ?? Tally()
            let known = candidate ? tally.candidateReaders : tally.stableReaders
            guard !known.contains(entity), known.count < Self.maxRemembered else { return }
            if candidate { tally.candidateReaders.insert(entity) } else { tally.stableReaders.insert(entity) }
            tally.counted += 1
            tallies[slot] = tally
        }
    }

    /// The report of each deployment counted since its last flush, as it stands now.
    func pending() -> [(slot: Slot, report: HealthReport, counted: UInt64)] {
        let now = clock.now().milliseconds
        return tallies.withLock { tallies in
            tallies.compactMap { slot, tally in
                guard tally.counted != tally.passed else { return nil }
                var stable = tally.stable, candidate = tally.candidate
                stable.readers = UInt64(tally.stableReaders.count)
                candidate.readers = UInt64(tally.candidateReaders.count)
                // Errors never exceed requests: a report of errors alone counts them as requests.
                stable.requests = max(stable.requests, stable.errors)
                candidate.requests = max(candidate.requests, candidate.errors)
                guard let report = try? HealthReport(reporter: reporter, stable: stable, candidate: candidate, at: now) else { return nil }
                return (slot, report, tally.counted)
            }
        }
    }

    /// Passes every deployment's report that changed to the sink. A deployment that no
    /// longer runs is forgotten; a sink that fails keeps the counts for the next flush.
    /// Returns how many reports were passed on.
    @discardableResult
    public func flush() async -> Int {
        guard let sink else { return 0 }
        var passed = 0
        for (slot, report, counted) in pending() {
            do {
                try await sink.reportHealth(report, deployment: slot.deployment, in: slot.config)
                passed += 1
                tallies.withLock { $0[slot]?.passed = counted }
            } catch let error as DiscfgError where error.code == .keyNotFound || error.code == .configNotFound || error.code == .invalidArgument {
                tallies.withLock { _ = $0.removeValue(forKey: slot) }
            } catch {
                continue
            }
        }
        return passed
    }

    /// Flushes every `period` until the task is cancelled.
    public func run(every period: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            await flush()
        }
        await flush()
    }
}
