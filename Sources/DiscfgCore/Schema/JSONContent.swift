import Foundation
import DiscfgJSON

/// JSON in values: which content types are JSON, and reading a value as JSON with errors
/// that name the key and the place in the text.
///
/// A key whose content type is JSON (``isJSON(_:)``) must hold valid JSON; every change
/// that writes one checks it (``ChangeTransaction``). A key with a schema holds JSON
/// whatever its content type says.
public enum JSONContent {
    /// The content type discfg gives a value it writes as JSON (a patched value keeps its own).
    public static let mediaType = "application/json"

    /// Whether a media type is JSON: `application/json` or any `…/…+json`, parameters and
    /// case aside.
    public static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return media == "application/json" || (media.hasSuffix("+json") && media.contains("/"))
    }

    /// Parses `value` as JSON.
    /// - Throws: `invalidArgument` naming the key, the line and the column, e.g.
    ///   `value of /app/settings is not valid JSON: line 3, column 14: expected ',' or '}'`.
    public static func parse(_ value: Data, key: Key?, field: String = "value") throws -> JSONValue {
        do {
            return try JSONParser.parse(Array(value))
        } catch {
            let subject = key.map { "value of \($0)" } ?? "value"
            throw DiscfgError.invalid(field, "\(subject) is not valid JSON: \(error)")
        }
    }

    /// The compact bytes of a JSON value, as discfg writes a value it made (a patch's result,
    /// a document's member).
    public static func bytes(_ value: JSONValue) throws -> Data {
        do {
            return Data(try JSONSerializer.serialize(value))
        } catch {
            throw DiscfgError.invalid("value", "value is not representable: \(error)")
        }
    }

    /// The value at `pointer` inside `item`'s value.
    /// - Throws: `invalidArgument` (field `path`) when the value is not JSON, and
    ///   `pathNotFound` when the pointer names nothing in it.
    public static func value(at pointer: JSONPointer, in item: Item) throws -> JSONValue {
        let document: JSONValue
        do {
            document = try JSONParser.parse(Array(item.value))
        } catch {
            throw DiscfgError.invalid("path", "value of \(item.key) is not JSON (\(error)), so a path cannot read into it")
        }
        guard let found = pointer.resolve(in: document) else {
            throw DiscfgError(.pathNotFound, "path \"\(pointer)\" names nothing in the value of \(item.key)", field: "path")
        }
        return found
    }

    /// Reads a JSON Pointer from a request or flag.
    /// - Throws: `invalidArgument` (field `path`) saying what is wrong with it.
    public static func pointer(_ text: String) throws -> JSONPointer {
        do {
            return try JSONPointer(text)
        } catch {
            throw DiscfgError.invalid("path", "path \"\(text.debugEscaped)\" is not a JSON Pointer (RFC 6901) such as /db/port: \(error.message)")
        }
    }
}
