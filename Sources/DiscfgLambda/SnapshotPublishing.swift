import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import DiscfgStores
import Foundation
import Logging

/// Publishes, after a stream batch, the snapshot of each changed config that has a
/// `publish` destination (`discfg update CFG --publish s3://…`).
///
/// It publishes the config's state as the store has it now, which is at least as new as
/// every change in the batch, so the objects only ever move forward; ``SnapshotPublisher``
/// never writes an older revision over a newer one, whoever else publishes. A failure
/// that may pass (S3 or the store unreachable, throttling) retries the batch from the
/// config's first record (the notifications already sent are not sent again: the
/// ledger skips them); one that will not (no bucket, no permission, a foreign object
/// at the key) is logged and dropped: the config's next change publishes the whole
/// state again once it is fixed.
struct SnapshotPublishing: Sendable {
    let store: any ConfigStore
    /// The S3 client, or nil when the function has no region.
    let s3: S3Client?

    /// The client for the function's region (`AWS_ENDPOINT_URL_S3`, then
    /// `AWS_ENDPOINT_URL`, override the endpoint); nil without a region.
    static func client(environment: [String: String]) -> S3Client? {
        guard let region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"], !region.isEmpty else { return nil }
        return S3Client(
            configuration: .init(region: region, endpoint: S3Client.Configuration.endpoint(environment: environment)),
            credentialProvider: CredentialChain.standard(explicit: nil, environment: environment, profile: nil)
        )
    }

    /// Publishes each changed config of `batch`; the index of the first record to retry
    /// from, if any.
    func handle(_ batch: DynamoDBStreamEvent, deadline: ContinuousClock.Instant, logger: Logger) async -> Int? {
        var firstRecord: [(ConfigName, Int)] = []
        for (index, record) in batch.Records.enumerated() {
            guard record.eventName == "INSERT", let image = record.dynamodb?.NewImage, let change = StreamedChange(newImage: image),
                  !firstRecord.contains(where: { $0.0 == change.config })
            else { continue }
            firstRecord.append((change.config, index))
        }
        var retryFrom: Int?
        for (config, record) in firstRecord where !(await publish(config, deadline: deadline, logger: logger)) {
            retryFrom = min(retryFrom ?? record, record)
        }
        return retryFrom
    }

    /// Publishes one config when it has a destination; false when the batch must be retried.
    private func publish(_ config: ConfigName, deadline: ContinuousClock.Instant, logger: Logger) async -> Bool {
        let info: ConfigInfo
        do {
            info = try await store.configInfo(config)
        } catch let error as DiscfgError where error.code == .configNotFound {
            return true
        } catch {
            logger.error("cannot read config \(config) to publish it: \(error)")
            return false
        }
        guard let destination = info.settings.publish else { return true }
        guard let s3 else {
            logger.error("config \(config) publishes to \(destination), but the function has no AWS region (AWS_REGION)")
            return true
        }
        do {
            let outcome = try await SnapshotPublisher(s3: s3).publish(config: config, from: store, to: destination, deadline: deadline - .seconds(1))
            switch outcome {
            case .published(let revision, let etag):
                logger.info("published \(config)@\(revision.rawValue) to s3://\(destination.bucket)/\(destination.key(for: config)) (ETag \(etag))")
            case .upToDate(let revision):
                logger.info("s3://\(destination.bucket)/\(destination.key(for: config)) already holds \(config)@\(revision.rawValue)")
            }
            return true
        } catch let error as S3Error where [.noSuchBucket, .accessDenied, .tooLarge].contains(error.code) {
            logger.error("cannot publish \(config): \(error); not retried (the next change publishes again)")
            return true
        } catch let error as DiscfgError where error.code == .conditionFailed || error.code == .configNotFound {
            logger.error("cannot publish \(config): \(error.message); not retried")
            return true
        } catch {
            logger.error("cannot publish \(config) to \(destination): \(error); the batch is retried")
            return false
        }
    }
}
