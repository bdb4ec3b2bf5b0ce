import DiscfgAWS
import DiscfgCore
import Foundation

/// How far each notification target has been sent a config's changes, kept in the table
/// under `pk=#notify`, so a stream batch the stream handler retries is not announced twice.
///
/// The sort key is `CONFIG/CREATED-MS/TARGET`: a config deleted and created again starts
/// its revisions at 1, and must not inherit the old config's progress.
extension DynamoDBStore: DeliveryLedger {
    private static func deliveryKey(_ config: ConfigInfo, target: String) -> Attributes {
        DynamoDBLayout.key(DynamoDBLayout.deliveriesPK, "\(config.name.rawValue)/\(config.createdAt.milliseconds)/\(target)")
    }

    /// The last revision of `config` delivered to `target` (zero when none was).
    public func deliveredRevision(_ config: ConfigInfo, target: String) async throws -> Revision {
        let item = try await connection.getItem(Self.deliveryKey(config, target: target), consistent: true)
        return Revision(item?[.delivered]?.uint64 ?? 0)
    }

    /// Records that `target` has every change of `config` up to `revision`; never moves back.
    public func recordDelivered(_ config: ConfigInfo, target: String, through revision: Revision) async throws {
        let input = UpdateItemInput(
            table: connection.table, key: Self.deliveryKey(config, target: target),
            update: Expression("SET \(.delivered) = :r, \(.deliveredAt) = :at", values: [":r": .number(revision.rawValue), ":at": .number(Date().milliseconds)]),
            condition: Expression("attribute_not_exists(\(.delivered)) OR \(.delivered) < :r")
        )
        do {
            _ = try await connection.raw("UpdateItem", input, as: IgnoredOutput.self)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            // Already recorded at or past this revision by an earlier attempt.
        } catch {
            throw connection.mapped(error, operation: "UpdateItem")
        }
    }
}

/// A change read from the table's stream: the `NewImage` of an inserted history item.
public struct StreamedChange: Sendable, Equatable {
    /// The config that changed.
    public var config: ConfigName
    /// The change.
    public var event: Event
    /// The previous value was too large to share the history item and is not in the
    /// image; read the event from the store for it.
    public var previousValueElsewhere: Bool
    /// The change's place among its revision's changes (0 for the first or only one).
    public var position: Int
    /// How many changes its revision holds (more than one for a transaction's).
    public var revisionEvents: Int

    /// Whether this is the last change of its revision: once it is delivered, the whole
    /// revision is.
    public var completesRevision: Bool { position + 1 >= revisionEvents }

    /// The change a stream image describes, or nil when the image is not a history event
    /// (keys, config meta, tokens, overflow items and delivery records are ignored).
    public init?(newImage: Attributes) {
        guard let config = newImage[.pk]?.string.flatMap(DynamoDBLayout.config(ofHistoryPK:)),
              let event = EventCodec.event(newImage)
        else { return nil }
        self.config = config
        self.event = event
        previousValueElsewhere = EventCodec.hasOverflow(newImage)
        let sortKey = newImage[.sk]?.string ?? ""
        position = sortKey.utf8.count > 20 ? Int(sortKey.dropFirst(21)) ?? 0 : 0
        revisionEvents = Int(clamping: newImage[.revisionEvents]?.uint64 ?? 1)
    }
}
