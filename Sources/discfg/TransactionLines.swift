import DiscfgCore
import Foundation

/// The line syntax of `discfg txn -i`, etcdctl's: a comparison is `target("key") op
/// "operand"` and a request is `put KEY VALUE [--ttl D] [--content-type T]`, `del KEY`
/// or `get KEY`. A key ending in `/` is a prefix.
///
/// ```
/// version("/lock") = "0"
/// put /lock me --ttl 30s
/// ```
enum TransactionLines {
    /// The sections `-i` asks for, in order, with their prompts.
    enum Section: CaseIterable {
        case compares, success, failure

        var prompt: String {
            switch self {
            case .compares: "compares:"
            case .success: "success requests (get, put, del):"
            case .failure: "failure requests (get, put, del):"
            }
        }

        /// The section's name in errors and in the document (`compare[2]`).
        var field: String {
            switch self {
            case .compares: "compare"
            case .success: "success"
            case .failure: "failure"
            }
        }
    }

    /// Reads the three sections from `nextLine`, each ended by an empty line (or the end
    /// of input), writing each section's prompt with `prompt` first.
    static func read(prompt: (String) -> Void, nextLine: () throws -> String?) throws -> Transaction {
        var transaction = Transaction()
        var ended = false
        for section in Section.allCases {
            prompt(section.prompt)
            var index = 0
            while !ended {
                guard let raw = try nextLine() else {
                    ended = true
                    break
                }
                let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : raw
                if line.allSatisfy(\.isWhitespace) { break }
                let field = "\(section.field)[\(index)]"
                do {
                    switch section {
                    case .compares: transaction.compares.append(try comparison(line))
                    case .success: transaction.success.append(try operation(line))
                    case .failure: transaction.failure.append(try operation(line))
                    }
                } catch let error as DiscfgError {
                    let name = section == .compares ? "compares" : "\(section.field) requests"
                    throw DiscfgError(error.code, "\(name), line \(index + 1): \(error.message)", field: field)
                }
                index += 1
            }
        }
        try transaction.validate()
        return transaction
    }

    /// A comparison: `target("key") op "operand"`, the target one of `version` (`ver`),
    /// `value` (`val`), `mod` (`m`), `create` (`c`) or `exists`, op one of `=`, `!=`, `<`
    /// and `>`. A key ending in `/` compares every key under that prefix.
    static func comparison(_ line: String) throws -> Comparison {
        var scanner = LineScanner(line)
        let name = scanner.word()
        guard scanner.take("(") else {
            throw usage("a comparison looks like version(\"/key\") = \"0\": a target, the key in parentheses, an operator and an operand", field: "compare")
        }
        let key = try scanner.quotedOrBare(until: ")")
        guard scanner.take(")") else { throw usage("the key is not followed by \")\"", field: "compare") }
        let subject: Comparison.Subject = key.hasSuffix("/") || key.isEmpty ? .prefix(try KeyPrefix(key)) : .key(try Key(key))
        scanner.skipSpaces()
        guard let relation = scanner.relation() else { throw usage("expected =, !=, < or > after the key", field: "compare") }
        guard !scanner.atEnd else { throw usage("the operand is missing; quote it, as in = \"0\"", field: "compare") }
        let operand = try scanner.quotedOrBare(until: nil)
        guard scanner.atEnd else { throw usage("unexpected text after the operand; quote an operand with spaces", field: "compare") }
        let target: Comparison.Target
        switch name {
        case "version", "ver": target = .version(UInt64(try NumberField.version("version").parse(operand)))
        case "value", "val": target = .value(Data(operand.utf8))
        case "mod", "m", "modRevision": target = .modRevision(Revision(UInt64(try NumberField.revision("mod").parse(operand))))
        case "create", "c", "createRevision": target = .createRevision(Revision(UInt64(try NumberField.revision("create").parse(operand))))
        case "exists":
            switch operand {
            case "true": target = .exists(true)
            case "false": target = .exists(false)
            default: throw usage("exists compares with \"true\" or \"false\", not \"\(operand.debugEscaped)\"", field: "compare")
            }
        default:
            throw usage("unknown target \"\(name.debugEscaped)\"; use version, value, mod, create or exists", field: "compare")
        }
        let comparison = Comparison(subject, relation, target)
        try comparison.validate()
        return comparison
    }

    /// A request: `put KEY VALUE [--ttl D] [--content-type T]`, `del KEY` or `get KEY`,
    /// where a key ending in `/` deletes or reads every key under that prefix.
    static func operation(_ line: String) throws -> TransactionOperation {
        var scanner = LineScanner(line)
        var words: [String] = []
        var ttl: Int64?
        var contentType: String?
        while !scanner.atEnd {
            let (word, quoted) = try scanner.token()
            if !quoted, word.hasPrefix("--"), words.first == "put" {
                let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
                let value = parts.count == 2 ? parts[1] : scanner.atEnd ? nil : try scanner.token().text
                guard let value else { throw usage("\(parts[0]) needs a value", field: "success") }
                switch parts[0] {
                case "--ttl": ttl = try TTLParser.seconds(value)
                case "--content-type":
                    let media = try MediaTypeArgument.resolve(value, field: "success")
                    guard media != SecretMarker.contentType else {
                        throw usage("\(SecretMarker.contentType) marks sealed values; a transaction cannot seal values (use discfg set --secret)", field: "success")
                    }
                    contentType = media
                default: throw usage("unknown option \(parts[0].debugEscaped); a put takes --ttl and --content-type", field: "success")
                }
                continue
            }
            words.append(word)
        }
        switch (words.first, words.count) {
        case ("put", 3): return .put(try Key(words[1]), Data(words[2].utf8), ttlSeconds: ttl, contentType: contentType)
        case ("put", _): throw usage("a put is put KEY VALUE (quote a value with spaces: put /a \"two words\")", field: "success")
        case ("del", 2), ("delete", 2): return words[1].hasSuffix("/") ? .deletePrefix(try KeyPrefix(words[1])) : .delete(try Key(words[1]))
        case ("get", 2): return words[1].hasSuffix("/") ? .getPrefix(try KeyPrefix(words[1])) : .get(try Key(words[1]))
        case ("del", _), ("delete", _), ("get", _): throw usage("\(words[0]) takes one key (or a prefix ending in /)", field: "success")
        default: throw usage("a request is put KEY VALUE, del KEY or get KEY", field: "success")
        }
    }
}

/// Reads one line of `txn -i` input: words, quoted strings and operators.
private struct LineScanner {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ line: String) {
        scalars = Array(line.unicodeScalars)
    }

    var atEnd: Bool {
        var probe = index
        while probe < scalars.count, scalars[probe].properties.isWhitespace { probe += 1 }
        return probe == scalars.count
    }

    mutating func skipSpaces() {
        while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
    }

    /// Letters up to the first character that is not one.
    mutating func word() -> String {
        skipSpaces()
        var text = String.UnicodeScalarView()
        while index < scalars.count, scalars[index].properties.isAlphabetic { text.append(scalars[index]); index += 1 }
        return String(text)
    }

    /// Takes `character` when it comes next (after spaces).
    mutating func take(_ character: Unicode.Scalar) -> Bool {
        skipSpaces()
        guard index < scalars.count, scalars[index] == character else { return false }
        index += 1
        return true
    }

    mutating func relation() -> Comparison.Relation? {
        skipSpaces()
        for (text, relation) in [("!=", Comparison.Relation.notEqual), ("==", .equal), ("=", .equal), ("<", .less), (">", .greater)] {
            let operator_ = Array(text.unicodeScalars)
            if index + operator_.count <= scalars.count, Array(scalars[index..<index + operator_.count]) == operator_ {
                index += operator_.count
                return relation
            }
        }
        return nil
    }

    /// A quoted string, or bare text up to `end` (or a space when `end` is nil).
    mutating func quotedOrBare(until end: Unicode.Scalar?) throws -> String {
        skipSpaces()
        if index < scalars.count, scalars[index] == "\"" || scalars[index] == "'" { return try quoted() }
        var text = String.UnicodeScalarView()
        while index < scalars.count, scalars[index] != end, end != nil || !scalars[index].properties.isWhitespace {
            text.append(scalars[index])
            index += 1
        }
        return String(text).trimmingCharacters(in: .whitespaces)
    }

    /// The next word, quoted or bare, and whether it was quoted.
    mutating func token() throws -> (text: String, quoted: Bool) {
        skipSpaces()
        if index < scalars.count, scalars[index] == "\"" || scalars[index] == "'" { return (try quoted(), true) }
        return (try quotedOrBare(until: nil), false)
    }

    /// `"text"` with `\"`, `\\`, `\n`, `\t` and `\r` escapes, or `'text'` as it is.
    private mutating func quoted() throws -> String {
        let quote = scalars[index]
        index += 1
        var text = String.UnicodeScalarView()
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == quote { return String(text) }
            guard quote == "\"", scalar == "\\" else { text.append(scalar); continue }
            guard index < scalars.count else { break }
            let escaped = scalars[index]
            index += 1
            switch escaped {
            case "\"", "\\": text.append(escaped)
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            default: throw usage("unknown escape \\\(escaped) in a quoted string; use \\\", \\\\, \\n, \\t or \\r", field: "transaction")
            }
        }
        throw usage("a quoted string is not closed with \(quote)", field: "transaction")
    }
}
