extension JSONPatch {
    /// Bounds on what applying a patch may build, so that a patch from a client cannot make a
    /// document that is too deep to write, parse or free, nor multiply its size with copies.
    public struct Limits: Sendable, Hashable {
        /// The deepest nesting (arrays and objects inside each other) a value added, replaced,
        /// copied or moved deeper may reach: the parser's default, so a patched document reads back.
        public var maxDepth: Int
        /// How many values (every array, object and scalar inside) `copy` operations may duplicate in
        /// one patch; values that a `move` takes deeper count too, as they are walked to measure their
        /// depth. Copies share storage, so without a bound 30 copies of the root would make a document
        /// of a billion values.
        public var maxCopiedValues: Int

        /// Depth 512, one million copied values, unless told otherwise.
        public init(maxDepth: Int = 512, maxCopiedValues: Int = 1_000_000) {
            self.maxDepth = maxDepth
            self.maxCopiedValues = maxCopiedValues
        }
    }

    /// Applies every operation in order, all or nothing, and returns the new document.
    ///
    /// The input is untouched. Operations edit one working copy in place (through ``DocumentCursor``),
    /// so an operation costs the depth of its path plus the array it inserts into or removes from,
    /// not the size of the document; each container is copied at most once, the first time it is edited.
    ///
    /// - Parameter limits: how deep the values the patch puts in may nest, and how much it may copy.
    /// - Throws: ``JSONPatchError`` of kind `.conflict` when an operation does not fit the document: a
    ///   failed `test`, a location or parent that does not exist, an index out of range or not an
    ///   index, removing the whole document, a value that would nest deeper than
    ///   ``Limits/maxDepth`` or copies past ``Limits/maxCopiedValues``; the message names the
    ///   operation, its pointer and, for `test`, the value found and the value expected. Kind
    ///   `.malformed` for a `move` into its own child (possible only in a patch built in code;
    ///   ``init(document:)`` refuses it).
    public func apply(to document: JSONValue, limits: Limits = Limits()) throws(JSONPatchError) -> JSONValue {
        var working = document
        var copyBudget = limits.maxCopiedValues
        for (index, operation) in operations.enumerated() {
            try PatchStep(index: index, operation: operation, limits: limits).apply(to: &working, copyBudget: &copyBudget)
        }
        return working
    }

    /// Why a `move` from `from` to `path` is malformed, or nil when it is not.
    static func moveIntoChild(from: JSONPointer, path: JSONPointer) -> String? {
        guard from.isAncestor(of: path) else { return nil }
        return "\"path\" \(quoted(path)) is inside \"from\" \(quoted(from)); a value cannot be moved into its own child"
    }

    /// A pointer in a message: its text as a JSON string, cut at 60 characters.
    static func quoted(_ pointer: JSONPointer) -> String {
        JSONSerializer.brief(.string(pointer.description))
    }
}

/// One operation applied to the working document.
private struct PatchStep {
    let index: Int
    let operation: JSONPatch.Operation
    let limits: JSONPatch.Limits

    func apply(to document: inout JSONValue, copyBudget: inout Int) throws(JSONPatchError) {
        switch operation {
        case .add(let path, let value):
            var unbounded = Int.max
            try checkDepth(of: value, at: path, role: "path", budget: &unbounded)
            try add(value, at: path, role: "path", in: &document)
        case .remove(let path):
            _ = try remove(at: path, role: "path", in: &document)
        case .replace(let path, let value):
            var unbounded = Int.max
            try checkDepth(of: value, at: path, role: "path", budget: &unbounded)
            var cursor = try open(path, tokens: path.tokens.count, role: "path", in: &document)
            cursor.focus = value
            document = cursor.close()
        case .move(let from, let path):
            if let message = JSONPatch.moveIntoChild(from: from, path: path) {
                throw JSONPatchError(.malformed, operationIndex: index, pointer: path.description, message: "\(label): \(message)")
            }
            if from == path {
                // Nothing moves, but RFC 6902 §4.4 still requires "from" to exist.
                var cursor = try open(from, tokens: from.tokens.count, role: "from", in: &document)
                document = cursor.close()
                return
            }
            let value = try remove(at: from, role: "from", in: &document)
            // Only a move to a deeper place can nest the document deeper than it was.
            if path.tokens.count > from.tokens.count {
                try checkDepth(of: value, at: path, role: "path", budget: &copyBudget)
            }
            try add(value, at: path, role: "path", in: &document)
        case .copy(let from, let path):
            guard let value = from.resolve(in: document) else { throw missing(from, role: "from", in: document) }
            try checkDepth(of: value, at: path, role: "path", budget: &copyBudget)
            try add(value, at: path, role: "path", in: &document)
        case .test(let path, let expected):
            guard let found = path.resolve(in: document) else { throw missing(path, role: "path", in: document) }
            guard found == expected else {
                throw conflict("path", path, "found \(JSONSerializer.brief(found)), expected \(JSONSerializer.brief(expected))")
            }
        }
    }

    /// Fails when a container inside `value`, put at `path`, would nest deeper than the limit, or
    /// when walking `value` (each value inside counts one against `budget`) goes past the budget.
    private func checkDepth(of value: JSONValue, at path: JSONPointer, role: String, budget: inout Int) throws(JSONPatchError) {
        // A container `depth` levels into the value has `path.tokens.count + depth` containers around it.
        let room = limits.maxDepth - path.tokens.count
        var pending: [(value: JSONValue, depth: Int)] = [(value, 0)]
        budget -= 1
        while let (current, depth) = pending.popLast() {
            let children: Int
            switch current {
            case .array(let items): children = items.count
            case .object(let object): children = object.count
            default: continue
            }
            guard depth < room else {
                throw conflict(role, path, "the document would nest deeper than \(limits.maxDepth) levels")
            }
            budget -= children
            guard budget >= 0 else {
                throw conflict(role, path, "this patch copies more than \(limits.maxCopiedValues) values (every value inside a copy counts, and inside a value moved deeper)")
            }
            if case .array(let items) = current {
                for item in items { pending.append((item, depth + 1)) }
            } else if case .object(let object) = current {
                for (_, member) in object { pending.append((member, depth + 1)) }
            }
        }
    }

    /// Adds `value` at `path` (RFC 6902 §4.1): the whole document at `""`, an object member (added
    /// at the end, or replaced in its place), or an array element inserted at an index up to the
    /// array's length, or appended for `-`.
    private func add(_ value: JSONValue, at path: JSONPointer, role: String, in document: inout JSONValue) throws(JSONPatchError) {
        guard let last = path.tokens.last else {
            document = value
            return
        }
        var cursor = try open(path, tokens: path.tokens.count - 1, role: role, in: &document)
        if case .object = cursor.focus {
            cursor.focus.withObject { $0.updateValue(value, forKey: last) }
        } else if case .array = cursor.focus {
            try cursor.focus.withArray { (items: inout [JSONValue]) throws(JSONPatchError) in
                switch JSONPointer.arrayToken(last) {
                case .end:
                    items.append(value)
                case .index(let i) where i <= items.count:
                    items.insert(value, at: i)
                case .index, .tooLarge:
                    let array = JSONPatch.quoted(JSONPointer(tokens: Array(path.tokens.dropLast())))
                    throw conflict(role, path, "index \(last) is out of range: the array \(array) has \(items.count) elements (add inserts at 0 to \(items.count), or appends at \"-\")")
                case .invalid(let reason):
                    throw conflict(role, path, reason)
                }
            }
        } else {
            let parent = JSONPatch.quoted(JSONPointer(tokens: Array(path.tokens.dropLast())))
            throw conflict(role, path, "\(parent) is \(JSONPatch.article(cursor.focus.typeName)), not an object or array")
        }
        document = cursor.close()
    }

    /// Removes the value at `path`, which must exist, and returns it (RFC 6902 §4.2).
    private func remove(at path: JSONPointer, role: String, in document: inout JSONValue) throws(JSONPatchError) -> JSONValue {
        guard !path.isRoot else {
            throw conflict(role, path, "the whole document cannot be removed (\"\" names the root, which has no parent to remove it from)")
        }
        var cursor = try open(path, tokens: path.tokens.count, role: role, in: &document)
        let removed = cursor.removeFocus() ?? .null
        document = cursor.close()
        return removed
    }

    /// Opens `document` at the first `count` tokens of `path`, each of which must exist.
    private func open(_ path: JSONPointer, tokens count: Int, role: String, in document: inout JSONValue) throws(JSONPatchError) -> DocumentCursor {
        var cursor = DocumentCursor(taking: &document)
        for token in path.tokens.prefix(count) {
            if let obstacle = cursor.enter(token) {
                throw conflict(role, path, explain(obstacle, path: path, depth: cursor.depth))
            }
        }
        return cursor
    }

    /// The error for a `path` that does not resolve in `document`, naming the first part missing.
    private func missing(_ path: JSONPointer, role: String, in document: JSONValue) -> JSONPatchError {
        var current = document
        for (depth, token) in path.tokens.enumerated() {
            switch DocumentCursor.slot(of: token, in: current) {
            case .success(let slot):
                switch current {
                case .object(let object): current = object.member(at: slot).value
                case .array(let items): current = items[slot]
                default: break
                }
            case .failure(let obstacle):
                return conflict(role, path, explain(obstacle, path: path, depth: depth))
            }
        }
        return conflict(role, path, "\(JSONPatch.quoted(path)) does not exist")
    }

    /// Why token `depth` of `path` could not be entered.
    private func explain(_ obstacle: DocumentCursor.Obstacle, path: JSONPointer, depth: Int) -> String {
        let location = JSONPatch.quoted(JSONPointer(tokens: Array(path.tokens[...depth])))
        let container = JSONPatch.quoted(JSONPointer(tokens: Array(path.tokens[..<depth])))
        return switch obstacle {
        case .missingMember:
            "\(location) does not exist"
        case .invalidIndex(let reason):
            "\(container) is an array and \(reason)"
        case .endOfArray:
            "\(location) names the end of the array \(container), after its last element, where there is no value"
        case .indexOutOfRange(let elements):
            "\(location) does not exist: index \(path.tokens[depth]) is out of range, the array \(container) has \(elements) elements"
        case .scalar(let typeName):
            "\(container) is \(JSONPatch.article(typeName)), not an object or array"
        }
    }

    /// `operation 3 ("test")`.
    private var label: String { "operation \(index) (\"\(operation.name)\")" }

    private func conflict(_ role: String, _ pointer: JSONPointer, _ detail: String) -> JSONPatchError {
        JSONPatchError(.conflict, operationIndex: index, pointer: pointer.description,
            message: "\(label), \(role) \(JSONPatch.quoted(pointer)): \(detail)")
    }
}
