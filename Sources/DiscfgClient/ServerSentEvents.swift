import Foundation

/// Reads a Server-Sent Events stream: `id:`, `event:` and `data:` fields, events ended by
/// a blank line, comments (heartbeats) ignored.
struct ServerSentEventParser {
    struct Message: Sendable, Equatable {
        var id: String?
        var event: String?
        var data: String
    }

    private var pending = ""
    private var current = Message(data: "")
    private var hasData = false

    /// Feeds bytes and returns the messages they complete.
    mutating func feed(_ text: String) -> [Message] {
        pending += text
        var messages: [Message] = []
        while let newline = pending.firstIndex(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = String(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.isEmpty {
                if hasData || current.id != nil { messages.append(current) }
                current = Message(data: "")
                hasData = false
                continue
            }
            if line.hasPrefix(":") { continue }
            let field: Substring
            var value: Substring
            if let colon = line.firstIndex(of: ":") {
                field = line[..<colon]
                value = line[line.index(after: colon)...]
                if value.hasPrefix(" ") { value = value.dropFirst() }
            } else {
                field = Substring(line)
                value = ""
            }
            switch field {
            case "id": current.id = String(value)
            case "event": current.event = String(value)
            case "data":
                current.data += (hasData ? "\n" : "") + value
                hasData = true
            default: continue
            }
        }
        return messages
    }
}
