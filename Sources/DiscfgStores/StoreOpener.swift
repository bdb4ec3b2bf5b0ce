import DiscfgAWS
import DiscfgClient
import DiscfgCore
import DiscfgDynamoDB
import DiscfgSQLite
import Foundation
import Synchronization

/// Opens the store a ``StoreLocation`` names: the one place that turns a store URL, the
/// environment and the AWS settings into a ``ConfigStore``. The CLI, `serve`, the Lambda
/// function and the benchmarks all open their stores here, so a store opens the same way
/// (the same credential chain, region rules and request signing) whatever runs it.
///
/// ```swift
/// let opener = StoreOpener(environment: ProcessInfo.processInfo.environment)
/// let store = try opener.open(StoreLocation(parsing: "dynamodb://us-east-1/discfg"))
/// ```
public struct StoreOpener: Sendable {
    /// Where AWS settings, `DISCFG_TOKEN` and the TLS files' variables are read from.
    public var environment: [String: String]
    /// The AWS region, overriding the URL's and the environment's.
    public var region: String?
    /// The AWS credentials profile, overriding the URL's.
    public var profile: String?
    /// Credentials to use before the chain (access key and secret given on the command line).
    public var credentials: AWSCredentials?
    /// The bearer token for a discfg server; `DISCFG_TOKEN` when nil.
    public var token: String?
    /// The CA to trust and the client certificate to present to a discfg server over
    /// `https://` (`--cacert`, `--cert`, `--key`); each one not set here is read from
    /// `DISCFG_CACERT`, `DISCFG_CERT`, `DISCFG_KEY`.
    public var tls: ClientTLS?
    /// Whether a missing DynamoDB table is created (the CLI does; the Lambda function,
    /// whose table the deployment owns, does not).
    public var createTable = true
    /// Whether a missing SQLite file (and its folder) is created. The CLI's commands that
    /// make a store (`init`, `create`, `serve`, `token create`) do; the others
    /// open only a file that is there, so a mistyped path is named rather than made.
    public var createSQLiteFile = true
    /// The capacity of a DynamoDB table created on opening; on-demand when nil.
    public var tableCapacity: TableCapacity?
    /// Told of slow steps (creating a table, waiting for it to become active).
    public var progress: @Sendable (String) -> Void = { _ in }
    /// How long one request to DynamoDB or a discfg server may take; nil for the
    /// defaults (10 s a DynamoDB attempt, 30 s a server request). `doctor` shortens it so
    /// a dead endpoint is named within seconds.
    public var requestTimeout: Duration?
    /// How DynamoDB calls are retried; nil for ``RetryPolicy``'s defaults.
    public var retryPolicy: RetryPolicy?

    /// An opener reading AWS settings and `DISCFG_TOKEN` from `environment`.
    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// The store at `location`.
    public func open(_ location: StoreLocation) throws -> any ConfigStore {
        switch location {
        case .sqlite(let path): try SQLiteStore(path: path, create: createSQLiteFile)
        case .memory: MemoryStore()
        case .dynamodb(let location): try openDynamoDB(location)
        case .server(let url): try openServer(url)
        }
    }

    /// A discfg server's API. Requests are SigV4-signed with the AWS credential chain when
    /// the server is behind API Gateway with IAM auth (an execute-api or lambda-url host,
    /// or `?sigv4=REGION`) and no bearer token is given; a token, when given, is sent
    /// instead (API Gateway in token mode).
    public func openServer(_ url: URL) throws -> RemoteStore {
        let bearer = token ?? environment["DISCFG_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let timeout = requestTimeout ?? .seconds(30)
        let chosen = (tls ?? ClientTLS()).over(ClientTLS(environment: environment))
        let tls = chosen == ClientTLS() ? nil : chosen
        guard let target = AWSRequestSigning.target(for: url) else { return try RemoteStore(url: url, token: bearer, timeout: timeout, tls: tls) }
        if let bearer { return try RemoteStore(url: target.url, token: bearer, timeout: timeout, tls: tls) }
        let chain = CredentialChain.standard(explicit: credentials, environment: environment, profile: profile)
        let signing = AWSRequestSigning(region: region ?? target.region, service: target.service, credentials: chain)
        return try RemoteStore(url: target.url, token: nil, signing: signing, timeout: timeout, tls: tls)
    }

    /// A DynamoDB table's store. Its AWS client lives as long as the process: commands
    /// are short, servers keep their store to the end, and the HTTP client must not be
    /// released without a shutdown.
    public func openDynamoDB(_ location: DynamoDBLocation) throws -> DynamoDBStore {
        let profile = profile ?? location.profile
        let region: String
        do {
            region = try RegionResolver.resolve(explicit: self.region ?? location.region, environment: environment, profile: profile)
        } catch let error as RegionResolver.NotFound {
            throw DiscfgError.invalid("region", "\(error.description), e.g. --region us-east-1 or dynamodb://us-east-1/\(location.table)")
        }
        let client = AWSJSONClient(
            configuration: .dynamoDB(
                region: region, endpoint: location.endpoint, timeout: requestTimeout ?? .seconds(10), retryPolicy: retryPolicy ?? RetryPolicy()
            ),
            credentialProvider: CredentialChain.standard(explicit: credentials, environment: environment, profile: profile)
        )
        let store = DynamoDBStore(client: client, configuration: DynamoDBStore.Configuration(
            table: location.table, consistentReads: location.consistentReads, createTableIfMissing: createTable,
            tableCapacity: tableCapacity ?? .onDemand, progress: progress
        ))
        Self.kept.withLock { $0.append(store) }
        return store
    }

    /// Every DynamoDB store opened, kept for the life of the process.
    private static let kept = Mutex<[DynamoDBStore]>([])
}
