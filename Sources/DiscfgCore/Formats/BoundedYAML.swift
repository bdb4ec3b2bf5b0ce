import CYaml
import Foundation
import Yams

/// Reads one YAML document into plain values (`[String: Any]`, `[Any]`, scalars) with
/// its cost bounded before it is paid.
///
/// YAML lets a small document describe a huge one: aliases to aliases double at every
/// level ("billion laughs"), and deep nesting overflows a recursive reader's stack. This
/// reader walks libyaml's event stream without recursion and refuses a document that is
/// nested deeper than ``Limits/depth`` or whose aliases would expand it past
/// ``Limits/nodes(forEvents:)``; either is one `invalidArgument` error. Aliases are
/// shared, never copied, so what is accepted costs no more than it reads.
///
/// Scalars are resolved as Yams resolves them (`5432` is an `Int`, `"5432"` a
/// `String`, `true` a `Bool`), and `<<` merge keys are honoured.
enum BoundedYAML {
    /// What a document may cost.
    enum Limits {
        /// The deepest nesting of mappings and sequences.
        static let depth = 64

        /// The most nodes a document may stand for once its aliases are expanded: four
        /// times the nodes it spells out, and never less than 100,000. A document
        /// without aliases is always within it.
        static func nodes(forEvents events: Int) -> Int { max(100_000, events * 4) }
    }

    /// Parses `text`; nil for an empty document.
    /// - Throws: `invalidArgument` (field `file`) naming the line and the problem.
    static func load(_ text: String) throws -> Any? {
        var bytes = Array(text.utf8)
        if bytes.isEmpty { return nil }
        return try bytes.withUnsafeMutableBufferPointer { buffer in
            let reader = try EventReader(buffer)
            defer { reader.close() }
            var builder = Builder()
            return try builder.build(reader)
        }
    }

    /// One value under construction: a mapping or a sequence, with what it needs to
    /// finish (its anchor, where its expanded size was counted from).
    private enum Open {
        case sequence([Any], anchor: String?, startCount: Int)
        case mapping([String: Any], pendingKey: String?, merges: [[String: Any]], anchor: String?, startCount: Int, line: Int)
    }

    /// Builds values from events with an explicit stack.
    private struct Builder {
        var stack: [Open] = []
        /// Values with anchors, and how many nodes each stands for.
        var anchors: [String: (value: Any, weight: Int)] = [:]
        /// Nodes the document stands for so far, aliases expanded.
        var expanded = 0
        /// Events read so far.
        var events = 0

        mutating func build(_ reader: EventReader) throws -> Any? {
            var root: Any?
            var documents = 0
            while let event = try reader.next() {
                events += 1
                switch event.kind {
                case .documentStart:
                    documents += 1
                    if documents > 1 { throw problem("the file holds more than one YAML document", line: event.line) }
                case .scalar(let value, let anchor):
                    try count(1, line: event.line)
                    if let anchor { anchors[anchor] = (value, 1) }
                    try add(value, line: event.line, root: &root)
                case .alias(let name):
                    guard let target = anchors[name] else { throw problem("alias *\(name) names no anchor defined before it", line: event.line) }
                    try count(target.weight, line: event.line)
                    try add(target.value, line: event.line, root: &root)
                case .sequenceStart(let anchor):
                    try open(.sequence([], anchor: anchor, startCount: expanded), line: event.line)
                case .mappingStart(let anchor):
                    try open(.mapping([:], pendingKey: nil, merges: [], anchor: anchor, startCount: expanded, line: event.line), line: event.line)
                case .collectionEnd:
                    guard let finished = stack.popLast() else { throw problem("unbalanced YAML structure", line: event.line) }
                    let (value, anchor, startCount): (Any, String?, Int) = switch finished {
                    case .sequence(let items, let anchor, let start): (items, anchor, start)
                    case .mapping(let entries, _, let merges, let anchor, let start, _): (Self.merged(entries, merges), anchor, start)
                    }
                    if let anchor { anchors[anchor] = (value, expanded - startCount) }
                    try add(value, line: event.line, root: &root)
                case .other:
                    continue
                }
            }
            return root
        }

        private mutating func open(_ collection: Open, line: Int) throws {
            try count(1, line: line)
            guard stack.count < Limits.depth else {
                throw problem("the document is nested deeper than \(Limits.depth) levels", line: line)
            }
            stack.append(collection)
        }

        private mutating func count(_ nodes: Int, line: Int) throws {
            expanded += nodes
            guard expanded <= Limits.nodes(forEvents: events) else {
                throw problem("the document's aliases expand it past \(Limits.nodes(forEvents: events)) nodes; write the values out instead", line: line)
            }
        }

        /// Puts a finished value into the collection being built, or makes it the root.
        private mutating func add(_ value: Any, line: Int, root: inout Any?) throws {
            guard let top = stack.popLast() else {
                root = value
                return
            }
            switch top {
            case .sequence(var items, let anchor, let start):
                items.append(value)
                stack.append(.sequence(items, anchor: anchor, startCount: start))
            case .mapping(var entries, let pendingKey, var merges, let anchor, let start, let openedAt):
                guard let key = pendingKey else {
                    guard let key = Self.keyText(value) else {
                        throw problem("a mapping key must be a plain value, not a list or mapping", line: line)
                    }
                    stack.append(.mapping(entries, pendingKey: key, merges: merges, anchor: anchor, startCount: start, line: openedAt))
                    return
                }
                if key == "<<" {
                    switch value {
                    case let mapping as [String: Any]: merges.append(mapping)
                    case let list as [Any] where list.allSatisfy({ $0 is [String: Any] }): merges.append(contentsOf: list.compactMap { $0 as? [String: Any] })
                    default: throw problem("a merge key (<<) must name a mapping or a list of mappings", line: line)
                    }
                } else {
                    guard entries.updateValue(value, forKey: key) == nil else {
                        throw problem("the mapping that starts on line \(openedAt) has the key \"\(key.debugEscaped)\" twice", line: line)
                    }
                }
                stack.append(.mapping(entries, pendingKey: nil, merges: merges, anchor: anchor, startCount: start, line: openedAt))
            }
        }

        /// Entries of `<<` merges fill in keys the mapping does not set itself; earlier
        /// merges win over later ones, as YAML's merge key specifies.
        private static func merged(_ entries: [String: Any], _ merges: [[String: Any]]) -> [String: Any] {
            guard !merges.isEmpty else { return entries }
            var result = entries
            for merge in merges {
                for (key, value) in merge where result[key] == nil { result[key] = value }
            }
            return result
        }

        private static func keyText(_ value: Any) -> String? {
            switch value {
            case let text as String: text
            case is [Any], is [String: Any]: nil
            case is NSNull: "null"
            default: String(describing: value)
            }
        }

        private func problem(_ message: String, line: Int) -> DiscfgError {
            DiscfgError.invalid("file", "the file is not acceptable YAML: \(message) (line \(line))")
        }
    }

    /// libyaml's parser as a sequence of events.
    ///
    /// A class: libyaml keeps a pointer to the parser inside the parser, so it must
    /// never move once its input is set.
    private final class EventReader {
        enum Kind {
            case documentStart
            case scalar(Any, anchor: String?)
            case alias(String)
            case sequenceStart(anchor: String?)
            case mappingStart(anchor: String?)
            case collectionEnd
            case other
        }

        struct Event {
            var kind: Kind
            var line: Int
        }

        private var parser = yaml_parser_t()
        private var finished = false

        init(_ buffer: UnsafeMutableBufferPointer<UInt8>) throws {
            guard yaml_parser_initialize(&parser) == 1 else {
                throw DiscfgError(.internal, "the YAML parser could not start")
            }
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
        }

        func close() {
            yaml_parser_delete(&parser)
        }

        func next() throws -> Event? {
            guard !finished else { return nil }
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else {
                let problem = parser.problem.map { String(cString: $0) } ?? "it cannot be parsed"
                throw DiscfgError.invalid("file", "the file is not valid YAML: \(problem) (line \(parser.problem_mark.line + 1))")
            }
            defer { yaml_event_delete(&event) }
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_STREAM_END_EVENT:
                finished = true
                return nil
            case YAML_DOCUMENT_START_EVENT:
                return Event(kind: .documentStart, line: line)
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                let tagName: Tag.Name = scalar.quoted_implicit == 1 ? .str : Self.text(scalar.tag).map(Tag.Name.init(rawValue:)) ?? .implicit
                let style = Node.Scalar.Style(rawValue: numericCast(scalar.style.rawValue)) ?? .any
                let value = Constructor.default.any(from: .scalar(.init(text, Tag(tagName), style)))
                return Event(kind: .scalar(value, anchor: Self.text(scalar.anchor)), line: line)
            case YAML_ALIAS_EVENT:
                return Event(kind: .alias(Self.text(event.data.alias.anchor) ?? ""), line: line)
            case YAML_SEQUENCE_START_EVENT:
                return Event(kind: .sequenceStart(anchor: Self.text(event.data.sequence_start.anchor)), line: line)
            case YAML_MAPPING_START_EVENT:
                return Event(kind: .mappingStart(anchor: Self.text(event.data.mapping_start.anchor)), line: line)
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                return Event(kind: .collectionEnd, line: line)
            default:
                return Event(kind: .other, line: line)
            }
        }

        private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            pointer.map { String(cString: $0) }
        }
    }
}
