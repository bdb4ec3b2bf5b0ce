/// An RFC 6902 JSON Patch: a list of operations applied to a JSON document in order, all or nothing.
///
/// ```swift
/// let patch = try JSONPatch(document: JSONParser.parse(#"""
///     [{"op": "test", "path": "/port", "value": 8080},
///      {"op": "replace", "path": "/port", "value": 9090},
///      {"op": "add", "path": "/hosts/-", "value": "db2"}]
///     """#))
/// let updated = try patch.apply(to: config)   // JSONPatchError(.conflict) if /port is not 8080
/// ```
public struct JSONPatch: Sendable, Hashable {
    /// One step of a patch (RFC 6902 §4).
    public enum Operation: Sendable, Hashable {
        /// Inserts into an array (at an index up to its length, or `-` for the end), adds or replaces
        /// an object member, or replaces the whole document at `""`.
        case add(path: JSONPointer, value: JSONValue)
        /// Removes an array element or object member, which must exist.
        case remove(path: JSONPointer)
        /// Replaces a value, which must exist.
        case replace(path: JSONPointer, value: JSONValue)
        /// Removes the value at `from` and adds it at `path`; `path` may not be inside `from`.
        case move(from: JSONPointer, path: JSONPointer)
        /// Adds a copy of the value at `from` at `path`.
        case copy(from: JSONPointer, path: JSONPointer)
        /// Fails the patch unless the value at `path` equals `value` (JSON equality: `1 == 1.0`,
        /// objects in any member order).
        case test(path: JSONPointer, value: JSONValue)

        /// The operation's name as the patch document spells it: `add`, `remove`, …
        public var name: String {
            switch self {
            case .add: "add"
            case .remove: "remove"
            case .replace: "replace"
            case .move: "move"
            case .copy: "copy"
            case .test: "test"
            }
        }

        /// The location the operation acts on.
        public var path: JSONPointer {
            switch self {
            case .add(let path, _), .remove(let path), .replace(let path, _), .move(_, let path),
                .copy(_, let path), .test(let path, _):
                path
            }
        }
    }

    /// The operations, in the order they apply.
    public var operations: [Operation]

    /// A patch of these operations.
    public init(_ operations: [Operation]) {
        self.operations = operations
    }

    /// Reads a patch document: an array of operation objects.
    ///
    /// Members other than `op`, `path`, `from` and `value` are ignored (RFC 6902 §4).
    ///
    /// - Throws: ``JSONPatchError`` of kind `.malformed` for a document that is not an array, an
    ///   element that is not an object, an unknown `op`, a missing or mistyped `path`, `from` or
    ///   `value`, a pointer that does not parse, or a `move` into its own child; the message names
    ///   the operation (`operation 2 ("move"): …`).
    public init(document: JSONValue) throws(JSONPatchError) {
        guard case .array(let elements) = document else {
            throw JSONPatchError(.malformed, operationIndex: nil, pointer: nil,
                message: "a JSON Patch is an array of operations, not \(Self.article(document.typeName))")
        }
        var operations: [Operation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            operations.append(try OperationReader(index: index, element: element).read())
        }
        self.operations = operations
    }

    /// The patch as its JSON document: `[{"op": "add", "path": "/a", "value": 1}, …]`.
    public var document: JSONValue {
        .array(operations.map { operation in
            var object = JSONObject()
            object["op"] = .string(operation.name)
            switch operation {
            case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
                object["path"] = .string(path.description)
                object["value"] = value
            case .remove(let path):
                object["path"] = .string(path.description)
            case .move(let from, let path), .copy(let from, let path):
                object["from"] = .string(from.description)
                object["path"] = .string(path.description)
            }
            return .object(object)
        })
    }

    /// "an object", "a string": the type name with its article.
    static func article(_ typeName: String) -> String {
        (typeName.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + typeName
    }
}

/// Reads one element of a patch document into an ``JSONPatch/Operation``.
private struct OperationReader {
    let index: Int
    let element: JSONValue

    func read() throws(JSONPatchError) -> JSONPatch.Operation {
        guard case .object(let object) = element else {
            throw malformed("operation \(index): must be an object, not \(JSONPatch.article(element.typeName))")
        }
        guard let opValue = object["op"] else { throw malformed("operation \(index): \"op\" is missing") }
        guard case .string(let op) = opValue else {
            throw malformed("operation \(index): \"op\" must be a string, not \(JSONPatch.article(opValue.typeName))")
        }
        let label = "operation \(index) (\(JSONSerializer.brief(.string(op))))"
        switch op {
        case "add": return .add(path: try pointer("path", object, label), value: try value(object, label))
        case "remove": return .remove(path: try pointer("path", object, label))
        case "replace": return .replace(path: try pointer("path", object, label), value: try value(object, label))
        case "copy": return .copy(from: try pointer("from", object, label), path: try pointer("path", object, label))
        case "test": return .test(path: try pointer("path", object, label), value: try value(object, label))
        case "move":
            let from = try pointer("from", object, label)
            let path = try pointer("path", object, label)
            if let message = JSONPatch.moveIntoChild(from: from, path: path) {
                throw JSONPatchError(.malformed, operationIndex: index, pointer: path.description, message: "\(label): \(message)")
            }
            return .move(from: from, path: path)
        default:
            throw malformed("operation \(index): unknown \"op\" \(JSONSerializer.brief(.string(op))); expected add, remove, replace, move, copy or test")
        }
    }

    private func pointer(_ member: String, _ object: JSONObject, _ label: String) throws(JSONPatchError) -> JSONPointer {
        guard let value = object[member] else { throw malformed("\(label): \"\(member)\" is missing") }
        guard case .string(let text) = value else {
            throw malformed("\(label): \"\(member)\" must be a string (a JSON pointer), not \(JSONPatch.article(value.typeName))")
        }
        do {
            return try JSONPointer(text)
        } catch {
            throw JSONPatchError(.malformed, operationIndex: index, pointer: text,
                message: "\(label): \"\(member)\" \(JSONSerializer.brief(.string(text))) is not a JSON pointer: \(error.message)")
        }
    }

    private func value(_ object: JSONObject, _ label: String) throws(JSONPatchError) -> JSONValue {
        guard let value = object["value"] else { throw malformed("\(label): \"value\" is missing") }
        return value
    }

    private func malformed(_ message: String) -> JSONPatchError {
        JSONPatchError(.malformed, operationIndex: index, pointer: nil, message: message)
    }
}

/// A patch that cannot be read, or cannot be applied to the document it was given.
public struct JSONPatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Whose fault: the patch's form, or its fit with the document.
    public enum Kind: Sendable, Hashable {
        /// The patch document is not a valid RFC 6902 patch (a client error whatever the document).
        case malformed
        /// The patch is valid but does not apply: a failed `test`, a missing location, an index out of range.
        case conflict
    }

    /// Whose fault.
    public let kind: Kind
    /// The position of the operation at fault in the patch, when one is.
    public let operationIndex: Int?
    /// The pointer at fault, in its text form, when one is.
    public let pointer: String?
    /// What went wrong, naming the operation: `operation 2 ("test"): "/port" is 8080, expected 9090`.
    public let message: String

    /// An error of `kind`.
    public init(_ kind: Kind, operationIndex: Int?, pointer: String?, message: String) {
        self.kind = kind
        self.operationIndex = operationIndex
        self.pointer = pointer
        self.message = message
    }

    public var description: String { message }
}
