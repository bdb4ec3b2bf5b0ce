/// A JSON document opened down one path, so the value at the end can be edited in place.
///
/// `JSONValue` is copy-on-write: editing a nested value through copies duplicates every container
/// on the way whenever another reference to it is alive, which makes each edit of a large document
/// cost its size. The cursor instead takes each child out of its parent on the way down (leaving
/// null in its place), so each container it holds is the only reference to its storage and edits
/// cost the depth of the path; ``close()`` puts the children back. It keeps its own stack, so a path
/// as deep as the document never recurses.
///
/// A cursor that is dropped without ``close()`` leaves the document it was taken from null: callers
/// that fail half-way throw the whole working document away (that is what makes a patch all or nothing).
struct DocumentCursor {
    /// The containers above ``focus``, outermost first, each with the child on the path taken out.
    private var ancestors: [JSONValue] = []
    /// Where the taken child sits in each ancestor: a member position or an array index.
    private var slots: [Int] = []
    /// The value at the cursor.
    var focus: JSONValue

    /// Opens `document`, which is left null until ``close()`` hands it back.
    init(taking document: inout JSONValue) {
        focus = document
        document = .null
    }

    /// The number of tokens entered.
    var depth: Int { slots.count }

    /// Why ``enter(_:)`` could not go further.
    enum Obstacle: Error {
        /// The object has no such member.
        case missingMember
        /// The token is not an array index (the reason says why).
        case invalidIndex(String)
        /// `-`: the position after the last element, which holds no value.
        case endOfArray
        /// The index is past the last element.
        case indexOutOfRange(count: Int)
        /// The focus is a scalar, with this type name.
        case scalar(String)
    }

    /// Where the child named `token` sits in `container` (a member position or an array index), or why there is none.
    static func slot(of token: String, in container: JSONValue) -> Result<Int, Obstacle> {
        switch container {
        case .object(let object):
            guard let position = object.position(forKey: token) else { return .failure(.missingMember) }
            return .success(position)
        case .array(let items):
            switch JSONPointer.arrayToken(token) {
            case .index(let i) where i < items.count: return .success(i)
            case .index, .tooLarge: return .failure(.indexOutOfRange(count: items.count))
            case .end: return .failure(.endOfArray)
            case .invalid(let reason): return .failure(.invalidIndex(reason))
            }
        default:
            return .failure(.scalar(container.typeName))
        }
    }

    /// Moves the focus to its child named `token`, or returns why it cannot (the focus is then unchanged).
    mutating func enter(_ token: String) -> Obstacle? {
        let slot: Int
        switch Self.slot(of: token, in: focus) {
        case .success(let found): slot = found
        case .failure(let obstacle): return obstacle
        }
        var child = JSONValue.null
        // Each container is moved out of `focus` while its child is taken, so the take does not copy it.
        focus.withObject { child = $0.exchangeValue(at: slot, with: .null) }
        focus.withArray { items in
            child = items[slot]
            items[slot] = .null
        }
        ancestors.append(focus)
        slots.append(slot)
        focus = child
        return nil
    }

    /// Removes the focused value from its parent, which becomes the focus, and returns it; nil at the root.
    mutating func removeFocus() -> JSONValue? {
        guard var parent = ancestors.popLast() else { return nil }
        let slot = slots.removeLast()
        let removed = focus
        focus = .null
        parent.withObject { $0.removeValue(forKey: $0.member(at: slot).key) }
        parent.withArray { $0.remove(at: slot) }
        focus = parent
        return removed
    }

    /// Puts every taken child back and returns the whole document.
    mutating func close() -> JSONValue {
        var child = focus
        focus = .null
        while var parent = ancestors.popLast() {
            let slot = slots.removeLast()
            parent.withObject { $0.exchangeValue(at: slot, with: child) }
            parent.withArray { $0[slot] = child }
            child = parent
        }
        return child
    }
}

extension JSONValue {
    /// Runs `body` on the object this value holds, in place; nil (and `body` is not run) for anything else.
    ///
    /// The object is moved out of `self` while `body` runs, so editing it does not copy its storage.
    @discardableResult
    mutating func withObject<Result, Failure: Error>(
        _ body: (inout JSONObject) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        // `guard case` rather than `switch`: a switch keeps its own copy of the subject alive (in
        // debug builds at least), and that second reference would make the edit copy the storage.
        guard case .object(var object) = self else { return nil }
        self = .null
        defer { self = .object(object) }
        return try body(&object)
    }

    /// Runs `body` on the array this value holds, in place; nil (and `body` is not run) for anything else.
    @discardableResult
    mutating func withArray<Result, Failure: Error>(
        _ body: (inout [JSONValue]) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard case .array(var items) = self else { return nil }
        self = .null
        defer { self = .array(items) }
        return try body(&items)
    }
}
