import ArgumentParser
import DiscfgCore
import DiscfgJSON
import DiscfgSecrets
import DiscfgWire
import Foundation

/// Compare-and-swap flags shared by `set` and `delete`.
struct ConditionOptions: ParsableArguments {
    @Option(name: .customLong("if-version"), help: ArgumentHelp("Only if the key's version is N (0: only if it does not exist).", valueName: "n"),
            transform: { UInt64(try NumberField.version("--if-version").parse($0)) })
    var ifVersion: UInt64?

    @Option(name: .customLong("if-mod-revision"), help: ArgumentHelp("Only if the key was last written at revision R.", valueName: "r"),
            transform: { UInt64(try NumberField.revision("--if-mod-revision").parse($0)) })
    var ifModRevision: UInt64?

    @Option(
        name: [.customLong("if-value"), .customLong("condition"), .customShort("c")],
        help: ArgumentHelp("Only if the key's current value is exactly this (the original's --condition).", valueName: "value")
    )
    var ifValue: String?

    @Flag(name: .customLong("if-absent"), help: "Only if the key does not exist (same as --if-version 0).")
    var ifAbsent = false

    @Flag(name: .customLong("if-exists"), help: "Only if the key exists.")
    var ifExists = false

    /// The conditions, after rejecting combinations that can never hold.
    func conditions() throws -> [Condition] {
        if ifAbsent, ifExists { throw usage("--if-absent and --if-exists contradict each other", field: "--if-absent") }
        if ifAbsent, let version = ifVersion, version != 0 {
            throw usage("--if-absent and --if-version \(version) contradict each other", field: "--if-absent")
        }
        if ifAbsent || ifVersion == 0, ifValue != nil || ifModRevision != nil || ifExists {
            throw usage("a condition that the key must not exist cannot be combined with conditions on its value, revision or existence", field: "--if-absent")
        }
        var conditions: [Condition] = []
        if ifAbsent { conditions.append(.version(0)) }
        if let ifVersion, !(ifAbsent && ifVersion == 0) { conditions.append(.version(ifVersion)) }
        if let ifModRevision { conditions.append(.modRevision(Revision(ifModRevision))) }
        if let ifValue { conditions.append(.value(Data(ifValue.utf8))) }
        if ifExists { conditions.append(.exists) }
        return conditions
    }
}

struct SetCommand: AsyncParsableCommand, SecretFlagCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set a key's value.",
        usage: "discfg set [<options>] [<config>] <key> [<value>]",
        discussion: """
        The value comes from the argument, from a file (-d FILE, '-d -' for \
        standard input), or from standard input when it is piped. A key without a \
        leading slash gets one: 'db/host' is /db/host.

        Examples:
          discfg set mykey '{"json": "works"}'
          discfg set mykey -d file.json                # stored as application/json
          discfg set mykey -d notes.txt --content-type text
          discfg set mycfg mykey VALUE                 # name the config explicitly
          discfg set session/token abc --ttl 15m       # expires in 15 minutes
          discfg set counter 2 --if-version 1          # compare-and-swap
          discfg set lock me --if-absent
          cat cert.pem | discfg set tls/cert
          discfg set db/password -d pw.txt --secret    # sealed before it is sent

        --secret seals the value with AES-256-GCM under the config's data key \
        before it leaves this machine (give the config a key first: discfg update \
        CFG --encryption file:///PATH or kms://REGION/alias/NAME). get opens it; \
        ls, history, watch and export show (secret) unless --reveal is given.

        Give a secret with -d FILE, or on standard input (-d - or a pipe), not as \
        an argument: any user of this machine can read a command line while it \
        runs (ps, /proc/PID/cmdline); discfg warns when one is.

        --content-type takes a media type or a short name: json \
        (application/json), yaml (application/yaml), text (text/plain) or binary \
        (application/octet-stream). Without it, -d FILE.json is stored as \
        application/json and FILE.yaml or FILE.yml as application/yaml; any other \
        value has no content type, and one that looks like JSON (it starts with { \
        or [) but does not parse is stored as text with a note saying where it \
        breaks. A value whose content type is JSON (application/json, or any +json) must \
        be valid JSON: one that is not is refused, naming its line and column. A \
        value that breaks the JSON Schema of its key or prefix (discfg schema) is \
        refused in one sentence naming the schema, where and why: "refused by the \
        schema on /app/: /db/port must be ≤ 65535; nothing changed".

        --document writes a JSON object as the keys under a prefix, in one \
        transaction at one revision, as 'get PREFIX --document' prints it: only \
        keys whose value changes are written, and --replace deletes the keys under \
        the prefix that it lacks. A member that names an existing JSON key is its \
        value; a new object member is a directory; a new string is a text value, \
        and any other new value is stored as application/json.
          discfg get /app/ --document > app.json
          discfg set /app/ --document -d app.json      # what changed, and the revision
          discfg set /app/ --document -d app.json --replace
          discfg set /app/ --document -d app.json --replace --dry-run
          discfg set /app/ --document -d app.json --replace --if-revision 41

        --dry-run prints the plan (each key the document would set or delete, \
        and the revision it is based on) and changes nothing; --if-revision N \
        writes the document only while the config is at N, so the plan reviewed \
        is the change that lands (exit 4 and nothing changed otherwise).

        \(ExitStatus.help)
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var reason: ChangeOptions
    @OptionGroup var condition: ConditionOptions
    @OptionGroup var plan: PlanOptions

    @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("Read the value from FILE ('-' for standard input).", valueName: "file"))
    var dataFile: String?

    @Option(name: [.customShort("t"), .long], help: ArgumentHelp("Expire the key after this long: seconds, or 30s, 5m, 2h, 7d.", valueName: "duration"))
    var ttl: String?

    @Option(name: .customLong("content-type"), help: ArgumentHelp("The value's media type, e.g. application/json, or json, yaml, text or binary.", valueName: "type"))
    var contentType: String?

    @Flag(name: .long, help: "Seal the value with the config's encryption key before it is stored.")
    var secret = false

    @Flag(name: .long, help: "Write a JSON object as the keys under a prefix (see above).")
    var document = false

    @Flag(name: .long, help: "With --document: delete keys under the prefix that the document lacks.")
    var replace = false

    @Argument(help: PositionalArguments.help("[CONFIG] KEY [VALUE] (or PREFIX [DOCUMENT] with --document)"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await reason.attributed {
            try await global.run("set") { output in
                let (config, rawKey, argumentValue) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig())
                    .configKeyValue(names: document ? ["PREFIX", "DOCUMENT"] : ["KEY", "VALUE"], valueElsewhere: dataFile != nil, standardInputMayGiveValue: true)
                if document {
                    try await setDocument(config: config, prefix: rawKey, argument: argumentValue, output: output)
                    return
                }
                if replace { throw usage("--replace applies to --document", field: "--replace") }
                if plan.dryRun || plan.ifRevision != nil {
                    throw usage("\(plan.dryRun ? "--dry-run" : "--if-revision") applies to --document; for one key use --if-mod-revision", field: plan.dryRun ? "--dry-run" : "--if-revision")
                }
                let key = try Key(rawKey)
                let given = try contentType.map { try MediaTypeArgument.resolve($0) }
                let options = SetOptions(
                    conditions: try condition.conditions(),
                    ttlSeconds: try ttl.map(TTLParser.seconds),
                    contentType: given ?? dataFile.flatMap(MediaTypeArgument.implied(byFile:))
                )
                try options.validate()
                if given == SecretMarker.contentType {
                    throw usage("\(SecretMarker.contentType) marks sealed values; use --secret", field: "--content-type")
                }
                let value = try Self.readValue(argumentValue, dataFile: dataFile, limit: Limits.maxValueBytes)
                if secret, argumentValue != nil {
                    ArgumentSecrets.warn("a secret value", instead: "give it with -d FILE, or on standard input (-d - or a pipe)", output: output)
                }
                try Limits.validateValue(value)
                if options.contentType == nil, !secret, let note = MediaTypeArgument.brokenJSONNote(value) { output.warn(note) }
                let store = try global.openStore()
                let change = secret
                    ? try await global.secrets(store, config).set(key, to: value, options: options)
                    : try await store.set(key, to: value, in: config, options: options)
                output.emit(Envelope(action: "set", config: config, change: change)) {
                    let item = change.item!
                    let expiry = Show.expiry(item)
                    let shown = secret ? SecretMarker.masked : Show.preview(value, limit: 60)
                    return "set \(key) = \(shown) (version \(item.version), revision \(change.revision)\(expiry.isEmpty ? "" : ", \(expiry)"))"
                }
            }
        }
    }

    /// The bytes given as the argument, with `-d FILE` (`-` for standard input), or piped
    /// to standard input: exactly one of them.
    static func readValue(_ argument: String?, dataFile: String?, limit: Int, what: String = "value") throws -> Data {
        switch (argument, dataFile) {
        case (.some, .some):
            throw usage("give the \(what) either as an argument or with -d, not both", field: "--data")
        case (let value?, nil):
            return Data(value.utf8)
        case (nil, let file?):
            return try ValueInput.readFile(file, field: "--data", limit: limit)
        case (nil, nil):
            guard ValueInput.standardInputHasData else {
                throw usage("no \(what) given: pass it as an argument, with -d FILE, or on standard input", field: what)
            }
            return try ValueInput.readStandardInput(limit: limit, field: what)
        }
    }

    /// Where the bytes `readValue` read came from, for messages.
    static func source(_ argument: String?, dataFile: String?) -> String {
        if argument != nil { return "the argument" }
        if let dataFile, dataFile != "-" { return dataFile }
        return "standard input"
    }
}

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Get a key's value, a part of a JSON value, or a prefix as one document.",
        usage: "discfg get [<options>] [<config>] <key>",
        discussion: """
        Prints the value; -f json prints the envelope with the item's version and \
        revisions; --raw prints the exact bytes with nothing added. A secret is \
        opened with the config's key (which must be at hand) and printed as it was \
        set.

        --path reads inside a JSON value with an RFC 6901 pointer such as /db/port: \
        a string is printed as its text, any other JSON compactly; --raw prints \
        the part as JSON (a string quoted) with no newline, and -f json the \
        envelope with the part, as JSON text, as the item's value (as REST's \
        ?path= answers). A path that names nothing exits 3; a value that is not \
        JSON exits 2.

        --document reads every key under a prefix as one JSON object: /app/db/host \
        under /app/ is {"db": {"host": ...}}. A JSON value is embedded as JSON, \
        other text as a string, and binary as {"$base64": "..."}. It is printed \
        indented (with -f json too), and compact with --raw; 'discfg set PREFIX \
        --document' writes it back.

        Examples:
          discfg get mykey
          discfg get mykey -f json
          discfg get mycfg mykey --revision 12         # as it was at revision 12
          discfg get tls/cert --raw > cert.pem
          discfg get app/settings --path /db/port      # 5432
          discfg get /app/ --document > app.json       # every key under /app/
          discfg get /app/ --document --revision 12

        \(ExitStatus.help)
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Read the key as it was at this config revision.", valueName: "r"),
            transform: { UInt64(try NumberField.revision("--revision").parse($0)) })
    var revision: UInt64?

    @Flag(name: .long, help: "Print the value's exact bytes, with no newline added.")
    var raw = false

    @Option(name: .long, help: ArgumentHelp("Print only this part of a JSON value (a JSON Pointer such as /db/port).", valueName: "pointer"))
    var path: String?

    @Flag(name: .long, help: "Print the keys under a prefix (such as /app/) as one JSON object.")
    var document = false

    @Argument(help: PositionalArguments.help("[CONFIG] KEY (or PREFIX with --document)"), completion: ShellCompletion.configOrKey) var arguments: [String] = []

    func run() async throws {
        try await global.run("get") { output in
            let pointer = try path.map(JSONContent.pointer)
            let at = revision.map { Revision($0) }
            if document {
                try await printDocument(at: at, pointer: pointer, output: output)
                return
            }
            let (config, rawKey) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndTarget(what: "KEY")
            let key = try Key(rawKey)
            let store = try global.openStore()
            guard let stored = try await store.get(key, in: config, atRevision: at) else {
                throw DiscfgError.keyNotFound(key, in: config, atRevision: at)
            }
            var item = stored.isSecret ? try await global.secretReader(store, config, output: output).revealed(stored) : stored
            if let pointer {
                let part = try JSONContent.value(at: pointer, in: item)
                item.value = try JSONContent.bytes(part)
                if raw {
                    output.raw(item.value)
                    return
                }
                output.emit(Self.envelope(item, config: config, revision: at)) { Self.text(of: part, json: item.value) }
                return
            }
            if raw {
                output.raw(item.value)
                return
            }
            output.emit(Self.envelope(item, config: config, revision: at)) {
                guard let text = item.text else { return "<\(item.value.count) bytes of binary data; use --raw to write them out>" }
                return text
            }
        }
    }

    private static func envelope(_ item: Item, config: ConfigName, revision: Revision?) -> Envelope {
        var envelope = Envelope(action: "get")
        envelope.config = config.rawValue
        envelope.item = ItemDocument(item)
        envelope.revision = revision
        return envelope
    }

    /// A part of a JSON value as printed: a string as its text, other JSON as `json`, its
    /// compact text.
    private static func text(of part: JSONValue, json: Data) -> String {
        if case .string(let text) = part { return text }
        return String(decoding: json, as: UTF8.self)
    }

    /// `--document`: the keys under a prefix as one JSON object (or the part `pointer` names).
    private func printDocument(at revision: Revision?, pointer: JSONPointer?, output: Output) async throws {
        let (config, target) = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configAndOptionalTarget(what: "PREFIX")
        let prefix = try target.map { try KeyPrefix($0) } ?? .root
        var (value, _) = try await global.openStore().document(under: prefix, in: config, atRevision: revision)
        if let pointer {
            guard let part = pointer.resolve(in: value) else {
                throw DiscfgError(.pathNotFound, "path \"\(pointer)\" names nothing in the document of \(prefix)", field: "path")
            }
            value = part
        }
        if raw {
            output.raw(try JSONContent.bytes(value))
        } else if output.format != .silent {
            output.raw(Data((try PrettyJSON.text(value) + "\n").utf8))
        }
    }
}

