import ArgumentParser
import DiscfgCore
import DiscfgWire
import Foundation

struct TxnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "txn",
        abstract: "Compare keys, then change several keys at once (a transaction).",
        usage: "discfg txn [<options>] [<config>]",
        discussion: """
        As etcdctl txn: if every comparison holds, the success requests run, \
        otherwise the failure requests; either way atomically, and every key \
        written carries one new revision. The transaction is JSON, from --file FILE \
        or standard input (the body of POST /v1/{config}/txn, see the OpenAPI \
        document), or typed line by line with -i.

        A lock (held for 30 seconds, by whoever puts it first):
          cat > lock.json <<'EOF'
          {"compare": [{"key": "/lock", "target": "version",
                        "result": "=", "value": 0}],
           "success": [{"op": "put", "key": "/lock", "value": "me", "ttl": 30}],
           "failure": [{"op": "get", "key": "/lock"}]}
          EOF
          discfg txn myapp --file lock.json || echo "someone holds the lock"

        Moving a key, unless someone changed it or the new name is taken:
          discfg txn myapp -i <<'EOF'
          value("/db/host") = "db1"
          exists("/db/primary") = "false"

          put /db/primary db1
          del /db/host

          EOF

        Interactive (-i) asks for three sections, each ended by an empty line \
        (prompts go to standard error):
          compares:
            version("/lock") = "0"      value("/a") = "x"     mod("/a") > "5"
            create("/a") = "3"          exists("/a") = "true"
          success requests (get, put, del):
            put /a value                put /a "with spaces" --ttl 30s
            del /a                      get /a
          failure requests (get, put, del):
            the same

        A key ending in / is a prefix: version("/jobs/") = "0" holds when no key \
        under /jobs/ exists; del /tmp/ deletes every key under /tmp/.

        In JSON, a patch changes part of a key's JSON value as 'discfg patch' \
        does, with "merge" (RFC 7386) or "patch" (RFC 6902 operations). The key \
        must exist, and a patch that does not apply refuses the whole \
        transaction (exit 4, nothing changed):
          {"op": "patch", "key": "/app/db", "merge": {"port": 5433}}
          {"op": "patch", "key": "/app/db",
           "patch": [{"op": "replace", "path": "/port", "value": 5433}]}

        Every key written must meet its schema (discfg schema); a transaction \
        that breaks one is refused whole, in one sentence naming the schema, where and why.

        Output: SUCCESS or FAILURE, then a line per request ("put /a  version 2 \
        revision 7", "delete /tmp/x", "get /a = value"); -f json prints the \
        envelope, with succeeded and responses.

        Values put by a transaction are stored as given, even in a config with \
        encryption: a transaction cannot seal secrets yet (use set --secret), and \
        a value comparison on a secret compares its sealed bytes.

        EXIT CODES:
          0  the comparisons held and the success requests ran
          4  a comparison failed and the failure requests ran (they may write),
             or a patch did not apply; nothing changed then
          1  error (store unavailable, too many keys changed, ...); nothing changed
          2  bad input (not JSON, unknown field, a key written twice, ...), or a
             value its schema refuses; nothing changed
          3  config not found, or a key to patch not found
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var reason: ChangeOptions

    @Option(name: .customLong("file"), help: ArgumentHelp("Read the transaction (JSON) from FILE ('-' for standard input).", valueName: "path"))
    var file: String?

    @Flag(name: [.short, .long], help: "Type the transaction line by line, as etcdctl txn -i.")
    var interactive = false

    @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

    func run() async throws {
        try await reason.attributed {
            try await global.run("txn") { output in
                let config = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
                let (transaction, message) = try readTransaction()
                let result = try await Attribution.documented(message) { try await global.openStore().transact(transaction, in: config) }
                output.emit(Envelope(config: config, transaction: result)) {
                    Self.human(result, branch: result.succeeded ? transaction.success : transaction.failure)
                }
                if !result.succeeded { throw ExitCode(ExitStatus.conditionFailed) }
            }
        }
    }

    /// The transaction, and the message its JSON document gave.
    private func readTransaction() throws -> (Transaction, String?) {
        if interactive {
            guard file == nil else { throw usage("give the transaction either with --file or with -i, not both", field: "--interactive") }
            var read = 0
            let typed = try TransactionLines.read(
                prompt: { FileHandle.standardError.write(Data("\($0)\n".utf8)) },
                nextLine: {
                    guard let line = readLine(strippingNewline: true) else { return nil }
                    read += line.utf8.count + 1
                    guard read <= Limits.maxSnapshotBytes else {
                        throw DiscfgError(.tooLarge, "the transaction typed is larger than the limit of \(Limits.maxSnapshotBytes) bytes", field: "--interactive")
                    }
                    return line
                }
            )
            return (typed, nil)
        }
        let source: String
        if let file {
            source = file
        } else if ValueInput.standardInputHasData {
            source = "-"
        } else {
            throw usage("no transaction given: pass --file FILE, pipe JSON to standard input, or type it with -i", field: "--file")
        }
        let name = source == "-" ? "standard input" : source
        let data = try ValueInput.readFile(source, field: "--file", limit: Limits.maxSnapshotBytes)
        do {
            let document = try TransactionDocument.decode(data)
            return (try document.transaction(), document.message)
        } catch let error as DiscfgError {
            throw DiscfgError(error.code, "\(name): \(error.message)", field: error.field)
        }
    }

    /// SUCCESS or FAILURE, then one line per request of the branch that ran.
    static func human(_ result: TransactionResult, branch: [TransactionOperation]) -> String {
        var lines = [result.succeeded ? "SUCCESS" : "FAILURE"]
        for (operation, response) in zip(branch, result.responses) {
            switch response {
            case .put(let event):
                let version = event.item.map { "  version \($0.version)" } ?? ""
                let verb = if case .patch = operation { "patch" } else { "put" }
                lines.append("\(verb) \(event.key)\(version)  revision \(event.revision)")
            case .delete(let events):
                if events.isEmpty { lines.append("delete \(operation.path)  (nothing to delete)") }
                for event in events { lines.append("delete \(event.key)") }
            case .get(let items):
                if items.isEmpty { lines.append("get \(operation.path)  (not found)") }
                for item in items { lines.append("get \(item.key) = \(Show.preview(item, limit: 200))") }
            case .nested(let succeeded, _):
                // A transaction document names no nested transaction; a store's answer may.
                lines.append("txn  \(succeeded ? "SUCCESS" : "FAILURE")")
            }
        }
        return lines.joined(separator: "\n")
    }
}
