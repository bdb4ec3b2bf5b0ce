import ArgumentParser
import DiscfgAWS
import DiscfgClient
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSQLite
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
    @Option(name: .long, help: ArgumentHelp("Store URL (sqlite:///path.db, dynamodb://REGION/TABLE, memory:). Env: DISCFG_STORE.", valueName: "url"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("Bearer token for an http(s) store. Env: DISCFG_TOKEN.", valueName: "token"))
    var token: String?

    @Option(name: [.customShort("f"), .long], help: "Output format: human, json or silent.")
    var format: OutputFormat = .human

    @OptionGroup(title: "AWS (dynamodb:// stores)") var aws: AWSOptions

    @Option(name: .long, help: ArgumentHelp("Config to use instead of the one chosen with 'discfg use'. Env: DISCFG_CONFIG.", valueName: "name"))
    var config: String?

    /// The environment, read once.
    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Where the options say the store is.
    func storeLocation() throws -> StoreLocation {
        if let url = store ?? environment["DISCFG_STORE"], !url.isEmpty {
            return try StoreLocation(parsing: url)
        }
        return StoreLocation.defaultLocation(environment: environment)
    }

    /// The store's URL, for messages.
    var storeDescription: String { (try? storeLocation().description) ?? "the store" }

    /// The store the options name.
    func openStore() throws -> any ConfigStore {
        switch try storeLocation() {
        case .sqlite(let path): return try SQLiteStore(path: path)
        case .memory: return MemoryStore()
        case .dynamodb(let location): return try openDynamoDBStore(location, capacity: nil)
        case .server(let url): return try openRemoteStore(url)
        }
    }

    /// A server's API; requests are SigV4-signed with the AWS credential chain when the
    /// server is behind API Gateway with IAM auth (an execute-api or lambda-url host, or
    /// `?sigv4=REGION`) and no bearer token is given.
    func openRemoteStore(_ url: URL) throws -> RemoteStore {
        let bearer = token ?? environment["DISCFG_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        guard let target = AWSRequestSigning.target(for: url) else { return try RemoteStore(url: url, token: bearer) }
        // A bearer token, when given, is used instead of signing (API Gateway in token mode).
        if let bearer { return try RemoteStore(url: target.url, token: bearer) }
        let explicit = try aws.explicitCredentials()
        let credentials = CredentialChain.standard(explicit: explicit, environment: environment, profile: aws.credProfile)
        let signing = AWSRequestSigning(region: aws.region ?? target.region, service: target.service, credentials: credentials)
        return try RemoteStore(url: target.url, token: nil, signing: signing)
    }

    /// A DynamoDB store; progress (table creation, waiting for ACTIVE) goes to stderr in
    /// human format.
    func openDynamoDBStore(_ location: DynamoDBLocation, capacity: TableCapacity?) throws -> DynamoDBStore {
        let human = format.normalized == .human
        return try DynamoDBStoreOpener.store(location, aws: aws, environment: environment, capacity: capacity) { message in
            if human { FileHandle.standardError.write(Data("discfg: \(message)\n".utf8)) }
        }
    }

    /// The store, creating a DynamoDB table with `capacity` when it is missing.
    func openStore(tableCapacity capacity: TableCapacity?) throws -> any ConfigStore {
        guard case .dynamodb(let location) = try storeLocation() else {
            if capacity != nil { throw usage("--read-capacity and --write-capacity apply only to dynamodb:// stores", field: "capacity") }
            return try openStore()
        }
        return try openDynamoDBStore(location, capacity: capacity)
    }

    /// The store, as the keeper of bearer tokens.
    func openTokenStore() throws -> any TokenStore {
        guard let tokens = try openStore() as? any TokenStore else {
            throw DiscfgError(.invalidArgument, "the store \(storeDescription) keeps no tokens", field: "store")
        }
        return tokens
    }

    /// The config chosen by `--config`, `DISCFG_CONFIG` or a `.discfg` file, if any.
    func selectedConfig() throws -> ConfigSelection? {
        try ConfigSelection.find(explicit: config, environment: environment)
    }

    /// Runs a command body, printing its failure in the chosen format and exiting with
    /// the documented code.
    func run(_ action: String, _ body: (Output) async throws -> Void) async throws {
        let output = Output(format: format.normalized)
        do {
            try await body(output)
        } catch let error as DiscfgError {
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
