import ArgumentParser
import DiscfgAPI
import DiscfgAWS
import DiscfgClient
import DiscfgCore
import DiscfgStores
import DiscfgDynamoDB
import DiscfgSQLite
import DiscfgWire
import Foundation

/// How results are printed: `human` (default), `json` (the API's envelope) or `silent`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case human, json, silent
    // The original's help spelled it "slient"; accept that too.
    case slient

    var normalized: OutputFormat { self == .slient ? .silent : self }

    static var allValueStrings: [String] { ["human", "json", "silent"] }
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    /// The title of their section in each command's help, listed after the command's
    /// own options (``HelpSections``).
    static let title = "Global options"

    @Option(name: .long, help: ArgumentHelp("Store URL (sqlite:///path.db, dynamodb://REGION/TABLE, memory:). Env: DISCFG_STORE.", valueName: "url"))
    var store: String?

    @Option(
        name: .long,
        help: ArgumentHelp("A context saved with 'discfg context add': its store, config, token file and TLS files. Flags and variables for each part win. Env: DISCFG_CONTEXT.", valueName: "name"),
        completion: ShellCompletion.contexts
    )
    var context: String?

    @Option(name: .long, help: ArgumentHelp("Bearer token for an http(s) store. Prefer the env DISCFG_TOKEN: any user of the machine can read a command line.", valueName: "token"))
    var token: String?

    @Option(name: .long, help: ArgumentHelp("CA certificates (PEM) to trust for an https:// store, instead of the system's: a private CA. Env: DISCFG_CACERT.", valueName: "file"))
    var cacert: String?

    @Option(name: .long, help: ArgumentHelp("A client certificate (PEM) to present to an https:// store that asks for one; with --key. Env: DISCFG_CERT.", valueName: "file"))
    var cert: String?

    @Option(name: .long, help: ArgumentHelp("The client certificate's private key (PEM). Env: DISCFG_KEY.", valueName: "file"))
    var key: String?

    @Option(name: [.customShort("f"), .long], help: "Output format: human, json or silent.")
    var format: OutputFormat = .human

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp("Config to use instead of the one chosen with 'discfg use' ('discfg agent': a config to copy, repeatable). Env: DISCFG_CONFIG.", valueName: "name"),
        completion: ShellCompletion.configs
    )
    var configs: [String] = []

    @OptionGroup(title: "AWS (dynamodb:// stores)") var aws: AWSOptions

    /// The environment, read once.
    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Where the options say the store is: `--store`, `DISCFG_STORE`, the context in
    /// effect (``chosenContext()``), then the default file.
    func storeLocation() throws -> StoreLocation {
        if let url = store ?? environment["DISCFG_STORE"], !url.isEmpty {
            return try StoreLocation(parsing: url)
        }
        if let choice = try chosenContext() {
            do {
                return try StoreLocation(parsing: choice.context.store)
            } catch let error as DiscfgError {
                throw DiscfgError.invalid("context", "context \(choice.name): \(error.message)")
            }
        }
        return StoreLocation.defaultLocation(environment: environment)
    }

    /// The store's URL, for messages.
    var storeDescription: String { (try? storeLocation().description) ?? "the store" }

    /// The store the options name, which must be there: a SQLite file that is not is
    /// named, with how to create it, and neither it nor its folder is made.
    func openStore() throws -> any ConfigStore {
        try open(creating: false, tableCapacity: nil)
    }

    /// The store, made when it is missing: for the commands whose work is to make one
    /// (`init`, `create`, `serve`, `token create`); a DynamoDB table is
    /// created with `capacity`.
    func makeStore(tableCapacity capacity: TableCapacity? = nil) throws -> any ConfigStore {
        try open(creating: true, tableCapacity: capacity)
    }

    /// How this command opens stores: its AWS flags, `--token`, and progress (table
    /// creation, waiting for ACTIVE) on stderr in human format.
    func opener(tableCapacity capacity: TableCapacity? = nil) throws -> StoreOpener {
        var opener = StoreOpener(environment: environment)
        opener.region = aws.region
        opener.profile = aws.credProfile
        opener.credentials = try aws.explicitCredentials()
        opener.token = try resolvedToken()
        opener.tls = try resolvedTLS()
        opener.tableCapacity = capacity
        if format.normalized == .human {
            opener.progress = { FileHandle.standardError.write(Data("discfg: \($0)\n".utf8)) }
        }
        return opener
    }

    /// The store, creating a DynamoDB table with `capacity` when it is missing (a SQLite
    /// file is not made).
    func openStore(tableCapacity capacity: TableCapacity?) throws -> any ConfigStore {
        try open(creating: false, tableCapacity: capacity)
    }

    private func open(creating: Bool, tableCapacity capacity: TableCapacity?) throws -> any ConfigStore {
        let location = try storeLocation()
        if capacity != nil {
            guard case .dynamodb = location else { throw usage("--read-capacity and --write-capacity apply only to dynamodb:// stores", field: "capacity") }
        }
        var opener = try opener(tableCapacity: capacity)
        opener.createSQLiteFile = creating
        do {
            return try opener.open(location)
        } catch let error as DiscfgError where !creating {
            guard case .sqlite(let path) = location, error.code == .unavailable, !FileManager.default.fileExists(atPath: path) else { throw error }
            // The same options make it, so `init` needs --store only when it was given.
            let initCommand = store == nil ? "discfg init" : "discfg init --store '\(location)'"
            throw DiscfgError(.unavailable, "no store at \(path) (nothing was created): \(initCommand) creates one", field: "store")
        }
    }

    /// The store, as the keeper of bearer tokens.
    /// Who manages tokens for `discfg token`: a server through `/admin/tokens` for an
    /// http(s) store, else the store's own token records, in a store made when missing
    /// if `creating` (`token create`, before a first `serve`).
    func openTokenAdministration(creating: Bool = false) throws -> any TokenAdministration {
        let store = try creating ? makeStore() : openStore()
        if let remote = store as? any TokenAdministration { return remote }
        guard let tokens = store as? any TokenStore else {
            throw DiscfgError(.invalidArgument, "the store \(storeDescription) keeps no tokens", field: "store")
        }
        return Authenticator(mode: .required, store: tokens)
    }

    func openTokenStore() throws -> any TokenStore {
        guard let tokens = try openStore() as? any TokenStore else {
            throw DiscfgError(.invalidArgument, "the store \(storeDescription) keeps no tokens", field: "store")
        }
        return tokens
    }

    /// The config chosen by `--config`, `DISCFG_CONFIG` or a `.discfg` file, if any.
    /// `--config` names one config for every command but `discfg agent`.
    func selectedConfig() throws -> ConfigSelection? {
        guard configs.count <= 1 else { throw usage("--config is given \(configs.count) times; name one config", field: "--config") }
        return try ConfigSelection.find(explicit: configs.last, environment: environment, context: chosenContext())
    }

    /// Runs a command body, printing its failure in the chosen format and exiting with
    /// the documented code.
    func run(_ action: String, _ body: (Output) async throws -> Void) async throws {
        let output = Output(format: format.normalized)
        ArgumentSecrets.warnGlobal(self, output: output)
        do {
            try await body(output)
        } catch let error as DiscfgError {
            let error = PositionalArguments.explained(error)
            output.fail(action: action, error)
            throw ExitCode(ExitStatus.code(for: error))
        } catch let exit as ExitCode {
            throw exit
        } catch {
            output.fail(action: action, DiscfgError(.internal, String(describing: error)))
            throw ExitCode(ExitStatus.error)
        }
    }
}

/// A usage error raised while interpreting arguments: exit code 2.
func usage(_ message: String, field: String = "arguments") -> DiscfgError {
    DiscfgError(.invalidArgument, message, field: field)
}
