import Foundation
import DiscfgJSON

/// A change to part of a JSON value, applied inside the store's change transaction so
/// two patches of one key never lose each other's changes.
public enum ValuePatch: Hashable, Sendable {
    /// RFC 7386: members of the patch replace the value's, `null` removes one, objects merge.
    case merge(JSONValue)
    /// RFC 6902: operations in order (`add`, `remove`, `replace`, `move`, `copy`, `test`),
    /// all or nothing.
    case json(JSONPatch)

    /// The media type of a merge patch.
    public static let mergeMediaType = "application/merge-patch+json"
    /// The media type of a JSON patch.
    public static let jsonPatchMediaType = "application/json-patch+json"

    /// The media type of this patch's body.
    public var mediaType: String {
        switch self {
        case .merge: Self.mergeMediaType
        case .json: Self.jsonPatchMediaType
        }
    }

    /// The patch's body as JSON.
    public var document: JSONValue {
        switch self {
        case .merge(let value): value
        case .json(let patch): patch.document
        }
    }

    /// Reads a patch body sent as `mediaType`.
    /// - Throws: `unsupportedMediaType` for any other media type, `invalidArgument` for a
    ///   body that is not JSON or not a patch of that kind.
    public init(body: Data, mediaType: String?) throws {
        let media = mediaType?.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        switch media {
        case Self.mergeMediaType?:
            self = .merge(try JSONContent.parse(body, key: nil, field: "patch"))
        case Self.jsonPatchMediaType?:
            self = try Self(jsonPatch: try JSONContent.parse(body, key: nil, field: "patch"))
        default:
            throw DiscfgError(
                .unsupportedMediaType,
                "a patch is sent as \(Self.mergeMediaType) (RFC 7386) or \(Self.jsonPatchMediaType) (RFC 6902), not \(mediaType.map { "\"\($0.debugEscaped)\"" } ?? "without a Content-Type")",
                field: "Content-Type"
            )
        }
    }

    /// Reads an RFC 6902 patch document.
    /// - Throws: `invalidArgument` naming the operation at fault, or for more than
    ///   ``Limits/maxPatchOperations`` operations.
    public init(jsonPatch document: JSONValue) throws {
        if case .array(let operations) = document, operations.count > Limits.maxPatchOperations {
            throw DiscfgError.invalid("patch", "a JSON patch holds at most \(Limits.maxPatchOperations) operations, got \(operations.count); set the value whole instead")
        }
        do {
            self = .json(try JSONPatch(document: document))
        } catch {
            throw DiscfgError.invalid("patch", "the JSON patch is not valid: \(error.message)")
        }
    }

    /// The value `item` holds after this patch (its bytes, in `item`'s content type, and
    /// the JSON they hold, so the change's checks need not parse them again).
    /// - Throws: `patchFailed` when the value is not JSON (by its content type, or its
    ///   text), a `test` fails, a path does not exist, or its copies pass
    ///   ``Limits/maxPatchCopiedValues``.
    func apply(to item: Item, hasSchema: Bool) throws -> (bytes: Data, value: JSONValue) {
        if let contentType = item.contentType, !JSONContent.isJSON(contentType), !hasSchema {
            throw DiscfgError(
                .patchFailed,
                "\(item.key) holds a value of type \(contentType), not JSON, so it cannot be patched; set it whole instead",
                field: "patch", currentItem: item
            )
        }
        let current: JSONValue
        do {
            current = try JSONParser.parse(Array(item.value))
        } catch {
            throw DiscfgError(.patchFailed, "the value of \(item.key) is not JSON (\(error)), so it cannot be patched; set it whole instead", field: "patch", currentItem: item)
        }
        let patched: JSONValue
        switch self {
        case .merge(let patch):
            patched = MergePatch.apply(patch, to: current)
        case .json(let patch):
            do {
                patched = try patch.apply(to: current, limits: JSONPatch.Limits(maxCopiedValues: Limits.maxPatchCopiedValues))
            } catch {
                throw DiscfgError(.patchFailed, "the patch does not apply to \(item.key): \(error.message); nothing was changed", field: "patch", currentItem: item)
            }
        }
        return (try JSONContent.bytes(patched), patched)
    }
}
