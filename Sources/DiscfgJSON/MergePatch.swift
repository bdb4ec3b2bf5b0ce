/// RFC 7386 JSON Merge Patch: a partial document that says what to change.
///
/// An object patch merges member by member: a `null` member removes that member from the target,
/// an object member merges recursively (into `{}` when the target's member is missing or not an
/// object), any other member replaces. A patch that is not an object replaces the whole target.
/// Members that stay keep their place; new ones are appended in the patch's order.
///
/// ```swift
/// let target: JSONValue = ["a": "b", "c": ["d": "e", "f": "g"]]
/// MergePatch.apply(["a": "z", "c": ["f": nil]], to: target)   // {"a": "z", "c": {"d": "e"}}
/// ```
///
/// A merge patch cannot set a member to `null` nor edit arrays in place (RFC 7386 §1); use
/// ``JSONPatch`` for that.
public enum MergePatch {
    /// The target with the patch merged into it.
    ///
    /// Walks with an explicit stack rather than recursion, so a patch of any depth is safe, and edits
    /// the target's objects in place (cost: the size of the patch, plus the objects it edits copied
    /// once when the caller still holds them).
    public static func apply(_ patch: JSONValue, to target: JSONValue) -> JSONValue {
        guard case .object(let patchObject) = patch else { return patch }
        var frame = Frame(target: Self.object(target), patch: patchObject.members, key: "")
        var stack: [Frame] = []
        while true {
            if frame.next < frame.patch.count {
                let (key, value) = frame.patch[frame.next]
                frame.next += 1
                switch value {
                case .null:
                    frame.target.removeValue(forKey: key)
                case .object(let nested):
                    // Take the member out (null keeps its place) so the nested object is edited in place.
                    let current = frame.target.position(forKey: key).map { frame.target.exchangeValue(at: $0, with: .null) }
                    stack.append(frame)
                    frame = Frame(target: Self.object(current ?? .null), patch: nested.members, key: key)
                default:
                    frame.target.updateValue(value, forKey: key)
                }
            } else {
                guard var parent = stack.popLast() else { return .object(frame.target) }
                parent.target.updateValue(.object(frame.target), forKey: frame.key)
                frame = parent
            }
        }
    }

    /// One object being merged: the target's object, the patch's object, and how far through it we are.
    private struct Frame {
        var target: JSONObject
        let patch: [(key: String, value: JSONValue)]
        /// The member of the parent target this object goes back into.
        let key: String
        var next = 0
    }

    /// The object `value` holds, or a new empty object (RFC 7386: a non-object target becomes `{}`).
    private static func object(_ value: JSONValue) -> JSONObject {
        if case .object(let object) = value { return object }
        return JSONObject()
    }
}
