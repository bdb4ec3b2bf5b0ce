import DiscfgCore
import Foundation
import DiscfgJSON

/// The JSON form of a schema attached to a key or prefix (`GET /v1/{config}/schemas`,
/// `discfg schema ls -f json`): its target, the revision and version of the key it is
/// kept at, when it last changed, and the schema itself as JSON.
public struct SchemaDocument: Codable, Hashable, Sendable {
    /// The media type a schema is served as.
    public static let mediaType = "application/schema+json"

    /// The key (`/app/settings`) or prefix (`/app/`, `/`) the schema checks.
    public var target: String
    /// The revision it was last set at (its key's modRevision).
    public var revision: Revision
    /// How many times it has been set since it was attached.
    public var version: UInt64
    /// When it was last set.
    public var modified: Date
    /// The schema. Written with its numbers exactly as stored (`EnvelopeJSON`), where
    /// `JSONEncoder` would pass them through `Double`.
    public var schema: JSONValue

    /// The document for the schema kept in `item`.
    /// - Throws: `invalidArgument` when the item does not hold JSON (no schema was written
    ///   so: every schema is checked before it is kept).
    public init(target: SchemaTarget, item: Item) throws {
        self.target = target.path
        revision = item.modRevision
        version = item.version
        modified = item.modifiedAt
        schema = try JSONContent.parse(item.value, key: item.key, field: "schema")
    }
}
