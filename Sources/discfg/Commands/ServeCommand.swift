import ArgumentParser
import DiscfgAPI
import DiscfgCore
import Foundation
import Hummingbird
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the REST API over HTTP.",
        discussion: """
        Listens on 127.0.0.1:8899 by default, as the original did. Routes are described
        at /openapi.yaml; /healthz and /metrics (Prometheus) are there for operators.
        SIGTERM or Ctrl-C stops it gracefully, finishing requests in flight.

        Authentication uses bearer tokens ('discfg token create'):
          --auth auto      open until the first token exists, then required (default)
          --auth token     always required
          --auth none      never required
        A non-loopback --host needs tokens unless --insecure is given.

        Examples:
          discfg serve
          discfg serve --host 0.0.0.0 --port 8080 --auth token
          discfg serve --store sqlite:///var/lib/discfg/discfg.db
        """
    )

    enum AuthMode: String, ExpressibleByArgument, CaseIterable {
        case auto, token, none
    }

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "Address to listen on.") var host = "127.0.0.1"
    @Option(name: .long, help: "Port to listen on (0 picks a free one).") var port = 8899
    @Option(name: .long, help: "When bearer tokens are required: auto, token or none.") var auth: AuthMode = .auto
    @Flag(name: .long, help: "Allow a non-loopback address without tokens.") var insecure = false
    @Option(name: .customLong("request-timeout"), help: ArgumentHelp("Abandon a request (other than a watch) after this many seconds.", valueName: "seconds"))
    var requestTimeout: Int = 30
    @Option(name: .customLong("max-connections"), help: ArgumentHelp("Connections open at once; more wait to be accepted until one closes.", valueName: "count"))
    var maxConnections: Int = 4096
    @Option(name: .customLong("max-watches"), help: ArgumentHelp("Watches (event streams and long polls) open at once; more are answered 503 with Retry-After.", valueName: "count"))
    var maxWatches: Int = 1000
    @Option(name: .customLong("stream-backlog"), help: ArgumentHelp("KiB of events an event stream holds for a slow reader before cutting it off with the Last-Event-ID to resume from.", valueName: "KiB"))
    var streamBacklog: Int = 1024
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"

    func run() async throws {
        try await global.run("serve") { output in
            guard (0...65535).contains(port) else { throw usage("port \(port) is not between 0 and 65535", field: "--port") }
            guard requestTimeout > 0 else { throw usage("--request-timeout must be at least 1 second", field: "--request-timeout") }
            guard (1...1_000_000).contains(maxConnections) else { throw usage("--max-connections must be between 1 and 1000000", field: "--max-connections") }
            guard (1...1_000_000).contains(maxWatches) else { throw usage("--max-watches must be between 1 and 1000000", field: "--max-watches") }
            guard (1...1_048_576).contains(streamBacklog) else { throw usage("--stream-backlog must be between 1 and 1048576 KiB", field: "--stream-backlog") }
            guard let level = Logger.Level(rawValue: logLevel) else { throw usage("unknown log level \(logLevel)", field: "--log-level") }
            let store = try global.openStore()
            let tokens = store as? any TokenStore
            let tokenCount = try await tokens?.listTokens().count ?? 0
            let mode: Authenticator.Mode = switch auth {
            case .none: .open
            case .token: .required
            case .auto: .onceTokensExist
            }
            if !Self.isLoopback(host), !insecure, mode == .open || (mode == .onceTokensExist && tokenCount == 0) {
                throw usage(
                    "refusing to serve on \(host) without authentication: create a token ('discfg token create --role read') and use --auth token, or pass --insecure",
                    field: "--host"
                )
            }
            if mode != .open, tokens == nil {
                throw usage("this store keeps no tokens; use --auth none on loopback", field: "--auth")
            }
            // Buffered: a line per request written one at a time would cost more than the request.
            let logSink = LogSink.standardError
            defer { logSink.flush() }
            var logger = Logger(label: "discfg") { BufferedLogHandler(label: $0, sink: logSink) }
            logger.logLevel = level
            var configuration = DiscfgServer.Configuration()
            configuration.host = host
            configuration.port = port
            configuration.api.requestTimeout = .seconds(requestTimeout)
            configuration.maxConnections = maxConnections
            configuration.api.maxWatches = maxWatches
            configuration.api.streamBacklogBytes = streamBacklog * 1024
            let authenticator = Authenticator(mode: mode, store: tokens)
            let authText = switch mode {
            case .open: "none"
            case .required: "bearer tokens (\(tokenCount) exist)"
            case .onceTokensExist: tokenCount == 0 ? "none until a token is created" : "bearer tokens (\(tokenCount) exist)"
            }
            let storeName = global.storeDescription
            let app = DiscfgServer.makeApplication(
                store: store, authenticator: authenticator, configuration: configuration, logger: logger,
                onServerRunning: { port in
                    FileHandle.standardError.write(Data("discfg: serving \(storeName) on http://\(host):\(port) (auth: \(authText))\n".utf8))
                }
            )
            _ = output
            try await app.runService()
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke the bearer tokens a server accepts.",
        discussion: """
        Tokens are kept in the store (only their SHA-256 hash); the token itself is shown
        once, when created. Roles: read (get, list, history, watch, export), write (also
        set, delete, import), admin (also create, update and delete configs).

        Examples:
          discfg token create --role read --config myapp-prod --description "web tier"
          discfg token list
          discfg token revoke 3f9a0c12b7de
        """,
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a token and print it once.")

        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "read, write or admin.") var role: Role
        @Option(name: .customLong("scope"), help: ArgumentHelp("Limit the token to this config (repeatable).", valueName: "config"))
        var scopes: [String] = []
        @Option(name: .long, help: "Who holds it, for 'token list'.") var description: String?

        func run() async throws {
            try await global.run("token-create") { output in
                let configs = try scopes.isEmpty ? nil : scopes.map(ConfigName.init)
                let store = try global.openTokenStore()
                let (token, record) = TokenFormat.generate(role: role, configs: configs, description: description, now: SystemClock().now())
                try await store.saveToken(record)
                var envelope = Envelope(action: "token-create")
                envelope.message = token
                output.emit(envelope) {
                    """
                    \(token)
                    (token \(record.id), role \(role.rawValue)\(configs.map { ", configs " + $0.map(\.rawValue).joined(separator: ",") } ?? ""); it is not shown again)
                    """
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never the tokens themselves).")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await global.run("token-list") { output in
                let tokens = try await global.openTokenStore().listTokens()
                var envelope = Envelope(action: "token-list")
                envelope.message = tokens.map { "\($0.id) \($0.role.rawValue)" }.joined(separator: "\n")
                output.emit(envelope) {
                    guard !tokens.isEmpty else { return "no tokens; create one with 'discfg token create --role read'" }
                    let now = Date()
                    return Show.table(
                        ["ID", "ROLE", "CONFIGS", "CREATED", "DESCRIPTION"],
                        tokens.map { [$0.id, $0.role.rawValue, $0.configs?.map(\.rawValue).joined(separator: ",") ?? "*", Show.relative($0.createdAt, now: now), $0.description ?? ""] }
                    )
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by its id.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The token's id (from 'token list').") var id: String

        func run() async throws {
            try await global.run("token-revoke") { output in
                try await global.openTokenStore().revokeToken(id: id)
                var envelope = Envelope(action: "token-revoke")
                envelope.message = id
                output.emit(envelope) { "revoked token \(id); servers stop accepting it within a few seconds" }
            }
        }
    }
}

extension Role: ExpressibleByArgument {}
