import DiscfgCore

/// The budget of one etcd answer: every Range and Txn answer is bounded before it is
/// built, by stores that stop keeping items once it is spent (``ReadBudget``).
///
/// etcd itself sends an answer of any size up to gRPC's send limit and fails past it
/// ("grpc: trying to send message larger than max", `RESOURCE_EXHAUSTED`). Here a Range
/// past the budget is cut at the last key that fits, with `more` set and `count` the
/// whole range's, which is what Range's `more` means, so clients page on as they do
/// after a `limit`; an answer that cannot be cut that way (sorted by other than the key,
/// at a past revision, a Txn, the `prev_kv`s of a delete) is refused with
/// `RESOURCE_EXHAUSTED` and etcd's words for it.
public enum EtcdAnswer {
    /// The most bytes of keys and values one answer holds: 4 MiB, less room for the
    /// message's own fields, so every answer fits one gRPC message of
    /// ``GRPCConnection/maxMessageBytes`` (and the 4 MiB most clients accept by default).
    public static let maxBytes = GRPCConnection.maxMessageBytes - 64 * 1024
    /// What one key-value adds to an answer besides its key and value: protobuf's tags
    /// and lengths and its four revision and lease numbers (at most 55 bytes), counted
    /// generously so a range of many empty values stays within one message too.
    public static let bytesPerKeyValue = 64

    /// The read budget of an answer.
    public static func budget(keysOnly: Bool, past: ReadBudget.Past) -> ReadBudget {
        ReadBudget(bytes: maxBytes, bytesPerItem: bytesPerKeyValue, countsValues: !keysOnly, pastBudget: past)
    }

    /// What `item` costs in an answer.
    static func size(_ item: Item, keysOnly: Bool) -> Int {
        item.key.path.utf8.count + (keysOnly ? 0 : item.value.count) + bytesPerKeyValue
    }

    /// What `items` cost in an answer.
    static func size(_ items: [Item], keysOnly: Bool) -> Int {
        items.reduce(0) { $0 + size($1, keysOnly: keysOnly) }
    }
}

extension EtcdError {
    /// An answer past ``EtcdAnswer/maxBytes`` that cannot be cut (gRPC's words for a
    /// message past its limit, `RESOURCE_EXHAUSTED`, as etcd fails).
    public static let answerTooLarge = DiscfgError(
        .tooLarge,
        "grpc: trying to send message larger than max (the answer would hold more than \(EtcdAnswer.maxBytes) bytes of keys and values); read fewer keys at once: a limit, keys only, a narrower range, or key order",
        field: answerField
    )
    /// The field of errors about an answer's size, which etcd answers with `RESOURCE_EXHAUSTED`.
    static let answerField = "answer"
}
