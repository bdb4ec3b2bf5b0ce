import Crypto
import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSecrets
import Foundation
import Logging

/// Turns a batch of stream records into notifications: each change once per target, in
/// revision order per config.
///
/// Progress is recorded in the ledger after every delivery, so when a target fails the
/// batch is retried from the first record some target still lacks, and targets that
/// already have a change skip it.
struct NotificationDispatcher: Sendable {
    let store: any ConfigStore
    let ledger: any DeliveryLedger
    let eventBridge: EventBridgeSender?
    let webhooks: WebhookSender
    /// Opens webhook secrets sealed with the config's KMS key (``WebhookSecrets``).
    let keys: any KeyResolver
    /// Three attempts per delivery in one invocation; the stream retries the batch after that.
    var retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(200), maxDelay: .seconds(2))

    private struct Pending {
        var record: Int
        var sequenceNumber: String?
        var change: StreamedChange
    }

    func handle(_ batch: DynamoDBStreamEvent, deadline: ContinuousClock.Instant, logger: Logger) async -> StreamBatchResponse {
        var byConfig: [(ConfigName, [Pending])] = []
        for (index, record) in batch.Records.enumerated() {
            guard record.eventName == "INSERT", let image = record.dynamodb?.NewImage, let change = StreamedChange(newImage: image) else { continue }
            let pending = Pending(record: index, sequenceNumber: record.dynamodb?.SequenceNumber, change: change)
            if let slot = byConfig.firstIndex(where: { $0.0 == change.config }) {
                byConfig[slot].1.append(pending)
            } else {
                byConfig.append((change.config, [pending]))
            }
        }
        var firstFailed: Int?
        var sent = 0
        for (config, pending) in byConfig {
            let ordered = pending.sorted { ($0.change.event.revision, $0.change.position) < ($1.change.event.revision, $1.change.position) }
            switch await notify(config, ordered, deadline: deadline, logger: logger) {
            case .sent(let count):
                sent += count
            case .retryFrom(let failedRecord):
                firstFailed = min(firstFailed ?? failedRecord, failedRecord)
            }
        }
        let changes = byConfig.reduce(0) { $0 + $1.1.count }
        logger.info("stream batch: \(batch.Records.count) record(s), \(changes) change(s), \(sent) notification(s) sent\(firstFailed.map { ", retrying from record \($0)" } ?? "")")
        guard let firstFailed, let sequence = batch.Records[firstFailed].dynamodb?.SequenceNumber else {
            return StreamBatchResponse(batchItemFailures: [])
        }
        return StreamBatchResponse(batchItemFailures: [.init(itemIdentifier: sequence)])
    }

    private struct Failed: Error {
        var record: Int
    }

    private enum Outcome {
        /// Every target has the config's changes; this many notifications went out.
        case sent(Int)
        /// The batch must be retried from this record.
        case retryFrom(Int)
    }

    /// Delivers one config's changes to each of its targets; the count sent, or the
    /// first record that must be retried.
    private func notify(_ config: ConfigName, _ pending: [Pending], deadline: ContinuousClock.Instant, logger: Logger) async -> Outcome {
        guard let first = pending.first else { return .sent(0) }
        let info: ConfigInfo
        do {
            info = try await store.configInfo(config)
        } catch let error as DiscfgError where error.code == .configNotFound {
            logger.info("config \(config) no longer exists; \(pending.count) change(s) not notified")
            return .sent(0)
        } catch {
            logger.error("cannot read config \(config) to notify: \(error)")
            return .retryFrom(first.record)
        }
        // Changes from before the config was last created belong to a deleted namesake.
        var current = pending.filter { $0.change.event.at >= info.createdAt }
        if info.settings.notify.isEmpty || current.isEmpty { return .sent(0) }
        for index in current.indices where current[index].change.previousValueElsewhere {
            let revision = current[index].change.event.revision
            if let full = try? await store.events(in: config, scope: .key(current[index].change.event.key), from: revision, limit: 1).events.first,
               full.revision == revision {
                current[index].change.event = full
            }
        }
        var sent = 0
        var failedRecord: Int?
        for target in info.settings.notify {
            do {
                sent += try await deliver(current, to: target, info: info, deadline: deadline, logger: logger)
            } catch let failed as Failed {
                failedRecord = min(failedRecord ?? failed.record, failed.record)
            } catch {
                failedRecord = first.record
            }
        }
        return failedRecord.map { .retryFrom($0) } ?? .sent(sent)
    }

    private func deliver(_ pending: [Pending], to target: NotificationTarget, info: ConfigInfo, deadline: ContinuousClock.Instant, logger: Logger) async throws -> Int {
        let id = Self.ledgerID(target)
        let delivered: Revision
        do {
            delivered = try await ledger.deliveredRevision(info, target: id)
        } catch {
            logger.error("cannot read delivery progress of \(info.name) to \(target.description): \(error)")
            throw Failed(record: pending[0].record)
        }
        let due = pending.filter { $0.change.event.revision > delivered }
        var sent = 0
        switch target {
        case .eventBridge(let bus):
            var start = 0
            while start < due.count {
                let chunk = Array(due[start..<min(start + EventBridgeSender.maxEntriesPerCall, due.count)])
                let went = await retrying(deadline: deadline, logger: logger, what: "EventBridge \(bus)") { () async throws -> Int in
                    guard let eventBridge else {
                        throw DeliveryFailure(description: "EventBridge is not configured here (no AWS region)", permanent: false)
                    }
                    return try await eventBridge.send(chunk.map { ($0.change.config, $0.change.event) }, bus: bus)
                }
                if went > 0 {
                    // Progress moves by whole revisions: a transaction's later changes may
                    // still be ahead (in this batch or the next).
                    if let complete = chunk[..<went].last(where: \.change.completesRevision) {
                        try await record(info, id, through: complete.change.event.revision, failing: chunk[0].record, logger: logger)
                    }
                    sent += went
                }
                if went < chunk.count { throw Failed(record: chunk[went].record) }
                start += chunk.count
            }
        case .webhook(let url, let stored):
            guard let first = due.first else { break }
            let secret: String?
            do {
                if let stored {
                    let (name, encryption, keys) = (info.name, info.settings.encryption, keys)
                    secret = try await Self.beforeDeadline(deadline, what: "KMS, opening the secret of webhook \(url)") {
                        try await WebhookSecrets.open(stored, url: url, config: name, encryption: encryption, resolver: keys)
                    }
                } else {
                    secret = nil
                }
            } catch {
                // Retried with the batch: a KMS outage passes, and a missing grant is the
                // operator's to fix; signing without the secret is never the answer.
                logger.error("cannot open the secret of webhook \(url) of config \(info.name): \(error)")
                throw Failed(record: first.record)
            }
            for item in due {
                let went = await retrying(deadline: deadline, logger: logger, what: "webhook \(url)") { () async throws -> Int in
                    do {
                        try await webhooks.send(item.change.config, item.change.event, url: url, secret: secret)
                        return 1
                    } catch let failure as DeliveryFailure where failure.permanent {
                        // The receiver refuses this change for good; blocking the stream would not help.
                        logger.error("\(failure.description); giving up on this change")
                        return 1
                    }
                }
                guard went == 1 else { throw Failed(record: item.record) }
                if item.change.completesRevision {
                    try await record(info, id, through: item.change.event.revision, failing: item.record, logger: logger)
                }
                sent += 1
            }
        }
        return sent
    }

    private func record(_ info: ConfigInfo, _ id: String, through revision: Revision, failing record: Int, logger: Logger) async throws {
        do {
            try await ledger.recordDelivered(info, target: id, through: revision)
        } catch {
            logger.error("cannot record delivery of \(info.name)@\(revision): \(error)")
            throw Failed(record: record)
        }
    }

    /// Runs `send` until it delivers, with backoff, up to the policy's attempts and never
    /// past the deadline; returns how many changes went out (from the front).
    private func retrying(deadline: ContinuousClock.Instant, logger: Logger, what: String, _ send: () async throws -> Int) async -> Int {
        let attempts = retryPolicy.maxAttempts
        var delivered = 0
        for attempt in 1...attempts {
            do {
                return delivered + (try await send())
            } catch let partial as PartialDelivery {
                delivered += partial.delivered
                logger.warning("\(partial.failure.description) (attempt \(attempt) of \(attempts))")
                if partial.delivered > 0 { return delivered }
            } catch {
                logger.warning("\(error) (attempt \(attempt) of \(attempts))")
            }
            let delay = retryPolicy.delay(forRetry: attempt - 1)
            guard attempt < attempts, ContinuousClock.now + delay < deadline - .seconds(1) else { break }
            do { try await retryPolicy.sleep(delay) } catch { break }
        }
        return delivered
    }

    /// `body`'s result, or a failure once the invocation is 2 s from its deadline, so a
    /// peer that does not answer (KMS) never runs the function out of time.
    private static func beforeDeadline<T: Sendable>(
        _ deadline: ContinuousClock.Instant, what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(until: deadline - .seconds(2), clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw DeliveryFailure(description: "\(what) did not finish before the invocation's deadline", permanent: false)
            }
            return value
        }
    }

    /// A short, stable name for a target in the ledger (a webhook's secret is not part of it).
    static func ledgerID(_ target: NotificationTarget) -> String {
        switch target {
        case .eventBridge(let bus): "eventbridge:\(bus)"
        case .webhook(let url, _):
            "webhook:" + Hex.encode(SHA256.hash(data: Data(url.utf8)).prefix(12))
        }
    }
}
