import DiscfgCore
import Foundation
import DiscfgJSON

/// The JSON form of one ``TransactionResponse``, in an envelope's `responses`.
public struct TransactionResponseDocument: Codable, Hashable, Sendable {
    /// `put`, `delete` or `get`.
    public var op: String
    /// For a put: the item written.
    public var item: ItemDocument?
    /// For a put: the item before, when the key existed.
    public var prevItem: ItemDocument?
    /// For a delete: the items deleted.
    public var prevItems: [ItemDocument]?
    /// For a get: the items read.
    public var items: [ItemDocument]?

    /// The document for a response.
    public init(_ response: TransactionResponse) {
        switch response {
        case .put(let event):
            op = "put"
            item = event.item.map(ItemDocument.init)
            prevItem = event.prevItem.map(ItemDocument.init)
        case .delete(let events):
            op = "delete"
            prevItems = events.compactMap { $0.prevItem.map(ItemDocument.init) }
        case .get(let found):
            op = "get"
            items = found.map(ItemDocument.init)
        case .nested:
            // The REST API runs no nested transaction (its operations cannot name one),
            // so none of its answers holds a nested response.
            op = "txn"
        }
    }
}
