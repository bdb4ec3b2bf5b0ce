import ArgumentParser
import DiscfgAgent
import DiscfgAPI
import DiscfgCore
import Foundation
import Hummingbird
import ServiceLifecycle
import Logging
import NIOCore

struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Serve a read-only copy of configs on 127.0.0.1:2773, kept current from the store.",
        usage: "discfg agent (--store URL | --source S3-URL) --config NAME... [<options>]",
        discussion: """
        Copies each --config into memory and serves the REST API's reads (get, \
        list, export, watch, with ETags and ?raw) on loopback, so an application \
        reads its configuration from this machine: every discfg client works \
        unchanged with --store http://127.0.0.1:2773.

        Every --interval (default 15s) the agent asks the store for each config's \
        revision, one cheap read (on DynamoDB one GetItem of the config's meta \
        item): idle, that is 3600/interval requests an hour per config. When the \
        revision moved it reads only the changes since; when the store no longer \
        has them, the whole config. A read is at most one interval and one \
        request behind the store; /healthz and the Discfg-Staleness header tell \
        how long since the store last answered.

        Changes are refused (405): write to the store itself. With --cache-dir the \
        agent keeps each config's last known good copy on disk (written \
        atomically, signed with a key the agent keeps there) and serves it when \
        the store cannot be reached at start; a file failing its check or its \
        signature is ignored, never served. The directory must be the agent's \
        user's and writable by no one else (made 0700 when missing).

        Who can read: by default ANY USER OF THIS MACHINE can read every config \
        the agent holds, secrets included, over 127.0.0.1 (the agent warns at \
        start). --reader-token-file FILE (0600, one token a line) makes every \
        reader send 'Authorization: Bearer TOKEN' (DISCFG_TOKEN for discfg); \
        --listen unix:PATH serves on a Unix socket instead, made 0600, or 0660 \
        for the --socket-group, so file permissions decide who reads.

        --source s3://BUCKET/PREFIX follows the snapshots 'discfg publish' writes \
        there instead of a store: one GET with If-None-Match per config per \
        interval (a 304 when nothing changed). An object that is corrupt, of \
        another config or at an older revision is refused and counted as an \
        error; the copy held goes on being served. With --snapshot-key-file \
        (the key file 'discfg publish --snapshot-key-file' signs with) an object \
        not signed with it is refused too; without, a snapshot is only checked \
        for damage, and anyone who can write the bucket can forge one. \
        --config-prefix P (repeatable) also \
        holds every config of the store whose name starts with P, listed again \
        each interval: new configs are taken on, deleted ones dropped.

        Examples:
          discfg agent --store dynamodb:///discfg --config myapp
          discfg agent --store sqlite:///srv/d.db --config a --config b --interval 5s
          discfg agent --source s3://acme-config/prod --config myapp
          discfg agent --store dynamodb:///discfg --config-prefix myapp-
          discfg agent --config myapp --listen unix:/run/discfg/agent.sock
          discfg agent --config myapp --reader-token-file /etc/discfg/readers
          discfg get /db/host --config myapp --store http://127.0.0.1:2773
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    /// The configs to copy: every `--config` given (the global option, repeatable here).
    var configs: [ConfigName] {
        get throws {
            try global.configs.map { text in
                do { return try ConfigName(text) } catch let error as DiscfgError { throw usage(error.message, field: "--config") }
            }
        }
    }
    @Option(name: .long, help: "Loopback port to serve (0 picks a free one, announced on standard error). Default: 2773. Any local user can read there unless --reader-token-file is given.",
            transform: { try AgentSettings.port($0, field: "--port", allowsAny: true) })
    var port: Int?
    @Option(name: .long, help: ArgumentHelp("Serve on a Unix socket instead of 127.0.0.1: unix:/ABSOLUTE/PATH, made 0600 (0660 with --socket-group); a stale socket file there is replaced.", valueName: "unix:path"))
    var listen: String?
    @Option(name: .customLong("socket-group"), help: ArgumentHelp("With --listen unix:PATH, the group whose members may read (the socket is made 0660, that group's).", valueName: "group"))
    var socketGroup: String?
    @Option(name: .customLong("reader-token-file"), help: ArgumentHelp("Readers must send one of the bearer tokens in this file (one a line, dcfg_<12 hex>_<secret>; the file 0600, the agent's user's or root's); others get 401.", valueName: "file"))
    var readerTokenFile: String?
    @Option(name: .customLong("snapshot-key-file"), help: ArgumentHelp("With --source, take only snapshots signed with this key file ('discfg key init' makes one; 'discfg publish --snapshot-key-file' signs).", valueName: "file"))
    var snapshotKeyFile: String?
    @Option(name: .long, help: ArgumentHelp("How often to check the store: seconds, or 500ms, 15s, 2m, 1h (1s to 24h). Default: 15s.", valueName: "duration"),
            transform: { try AgentCommand.interval($0) })
    var interval: Duration = .seconds(15)
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp("Keep each config's last known good copy in this directory, and serve it when the store is unreachable at start.", valueName: "dir"))
    var cacheDirectory: String?
    @Option(name: .customLong("instance-id"), help: ArgumentHelp("The entity this agent's reads name when a reader names none (Discfg-Entity, Entity-Id, an OFREP targetingKey): which version of a staged deployment this host reads. Default: an id kept with --cache-dir, else the host name.", valueName: "id"))
    var instanceID: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"
    @Option(name: .long, help: ArgumentHelp("Follow the snapshots 'discfg publish' writes under s3://BUCKET/PREFIX instead of a store: one conditional GET per config per interval.", valueName: "s3-url"))
    var source: String?
    @Option(name: .customLong("config-prefix"), help: ArgumentHelp("Also hold every config whose name starts with this (repeatable), listed again each interval: new ones are taken on, deleted ones dropped. Stores only.", valueName: "prefix"))
    var configPrefixes: [String] = []
    /// The first spelling of --config-prefix, kept: elsewhere --prefix is a key prefix.
    @Option(name: .customLong("prefix"), help: .hidden) var legacyPrefixes: [String] = []
    /// `--config-prefix` (or `--prefix`) values.
    var prefixes: [String] { configPrefixes + legacyPrefixes }
    @Flag(name: .customLong("lambda-extension"), help: "Run as a Lambda extension (the layer's extensions/discfg-agent), configured by DISCFG_AGENT_* variables; see docs/aws.md.")
    var lambdaExtension = false

    /// `15`, `15s`, `500ms`, `2m`, `1h`: 1 second to 24 hours, read as the extension reads
    /// `DISCFG_AGENT_INTERVAL`.
    static func interval(_ text: String) throws -> Duration {
        try AgentSettings.interval(text, field: "--interval")
    }

    func run() async throws {
        if lambdaExtension {
            // An extension gets no arguments: its settings are the environment's.
            guard global.configs.isEmpty, cacheDirectory == nil else {
                throw usage("--lambda-extension takes its settings from DISCFG_AGENT_CONFIGS, DISCFG_STORE, … (see docs/aws.md), not --config or --cache-dir", field: "--lambda-extension")
            }
            throw ExitCode(await AgentExtension.run(environment: ProcessInfo.processInfo.environment))
        }
        try await global.run("agent") { _ in
            guard let level = Logger.Level(rawValue: logLevel) else { throw usage("unknown log level \(logLevel)", field: "--log-level") }
            let configs = try self.configs
            let prefixes = try checkedPrefixes()
            let destination = try snapshotSource()
            guard !configs.isEmpty || !prefixes.isEmpty else { throw usage("name the configs to copy with --config NAME (repeatable), or --config-prefix", field: "--config") }
            guard Set(configs).count == configs.count else { throw usage("a --config is named twice", field: "--config") }
            var logger = Logger(label: "discfg.agent")
            logger.logLevel = level
            let cache = try cacheDirectory.map { directory in
                do { return try SnapshotCache(directory: directory) } catch let error as DiscfgError { throw usage(error.message, field: "--cache-dir") }
            }
            let socket = try listenSocket()
            let readers = try readerTokens()
            let source = try openSource(destination, key: try snapshotKey(destination))
            let agent = Agent(source: source, configs: configs, prefixes: prefixes, interval: interval, cache: cache, logger: logger)
            try await agent.load()
            let port = self.port ?? 2773
            var configuration = agent.serverConfiguration(port: port)
            let entity = try agentEntity(cache)
            configuration.api.entity = entity
            // Readers and the health applications report here reach the store within an
            // interval; a published snapshot takes none.
            let health = HealthCounter(reporter: HealthCounter.reporterName(instance: entity), sink: (source as? StoreSource)?.store)
            configuration.api.health = health
            configuration.unixSocketPath = socket?.path
            let authenticator = readers.map { Authenticator(mode: .required, store: $0) } ?? Authenticator(mode: .open, store: nil)
            if socket == nil, readers == nil {
                logger.warning("serving without a credential on 127.0.0.1: any user of this machine can read every config held; give --reader-token-file, or --listen unix:PATH")
            }
            let names = (configs.map(\.description) + prefixes.map { "\($0)*" }).joined(separator: ", ")
            let startLogger = logger
            let app = DiscfgServer.makeApplication(
                store: agent.replica, authenticator: authenticator, configuration: configuration, logger: logger,
                onServerRunning: { port in
                    var address = "http://127.0.0.1:\(port)"
                    if let socket {
                        do { try socket.bound() } catch { startLogger.error("\((error as? DiscfgError)?.message ?? "\(error)")") }
                        address = "unix:\(socket.path) (mode \(String(socket.mode, radix: 8))\(socket.group.map { ", group \($0.name)" } ?? ""))"
                    }
                    let credential = readers == nil ? "" : ", to readers with a token of \(readers?.path ?? "")"
                    FileHandle.standardError.write(Data("discfg: serving a read-only copy of \(names) from \(source.description) on \(address)\(credential), checked every \(agent.interval)\n".utf8))
                },
                services: { _, _ in [AgentService(agent: agent), HealthFlushService(counter: health, interval: agent.interval)] }
            )
            defer { socket?.remove() }
            socket?.bindingStarts()
            do { try await app.runService() } catch let error as IOError where ListenFailure.covers(error) {
                if let socket { throw DiscfgError(.unavailable, "cannot serve on unix:\(socket.path): \(String(cString: strerror(error.errnoCode)))", field: "--listen") }
                throw ListenFailure.error(error, port: port, field: "--port")
            }
        }
    }

    /// The entity of reads that name none: `--instance-id`, else the cache's id, else the host name.
    private func agentEntity(_ cache: SnapshotCache?) throws -> String {
        if let instanceID {
            do { return try DeploymentEntity.checked(instanceID, field: "--instance-id") } catch let error as DiscfgError { throw usage(error.message, field: "--instance-id") }
        }
        return cache?.instanceID ?? ProcessInfo.processInfo.hostName
    }
}

/// Follows the configs while the server runs.
struct AgentService: Service {
    let agent: Agent

    func run() async throws {
        await cancelWhenGracefulShutdown { await agent.run() }
    }

}
