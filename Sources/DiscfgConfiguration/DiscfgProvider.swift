import Configuration
import DiscfgAWS
import DiscfgClient
import DiscfgCore
import DiscfgSecrets
import Foundation
import ServiceLifecycle
import Synchronization

/// Serves a discfg config, or the keys under a prefix of it, to swift-configuration: an
/// application reads its settings with `ConfigReader`, beside its other providers.
///
/// ```swift
/// let client = try ConfigClient(url: URL(string: "http://127.0.0.1:8899")!, keys: StandardKeyResolver(environment: env))
/// let discfg = try await DiscfgProvider(client: client, config: "myapp", prefix: "/myapp")
/// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), discfg])
/// let port = config.int(forKey: "http.port", default: 8080)     // /myapp/http/port
/// ```
///
/// - **Keys** map segment by segment: under prefix `/myapp`, the configuration key
///   `db.host` (components `db`, `host`) is the discfg key `/myapp/db/host`. The discfg
///   path is the "encoded key" swift-configuration reports in access logs.
/// - **JSON members** (`jsonMembers: true`): the members of JSON objects and arrays are
///   keys too. Under prefix `/myapp`, `/myapp/settings` holding `{"db": {"port": 5433}}`
///   gives `settings.db.port` = 5433; a key that exists at that path wins.
/// - **Values** are read as the type asked for: text as it is; integers, doubles and
///   booleans (`true/false`, `yes/no`, `on/off`, `1/0`) from the text; `bytes` as stored;
///   arrays from a JSON array or a comma-separated list (byte chunks in base64). A value
///   that does not read as the type asked for throws an error naming the key.
/// - **Secrets** (`discfg set --secret`) are opened in the process with `keys` (the server
///   never sees them open) and marked secret, so swift-configuration redacts them. A
///   secret that will not open (wrong key, tampered, no permission) makes the provider
///   fail to start, naming the key; one that arrives later makes reads of that key throw.
/// - **Live reload**: run the provider as a service (in a `ServiceGroup`, or with
///   Hummingbird's `Application(services:)`). It then follows the config's changes
///   through watch: `ConfigReader.watch…` sees each change, and each new snapshot
///   reflects it. After a dropped connection it resumes from the last revision it
///   applied; when the history it needs was compacted, it loads the keys again. Without
///   running it, the provider serves the keys it loaded.
public final class DiscfgProvider: Sendable {
    private struct ValueWatcher {
        var configKey: AbsoluteConfigKey
        var type: ConfigType
        var continuation: AsyncStream<Result<LookupResult, any Error>>.Continuation
    }

    private struct State {
        var snapshot: ProviderSnapshot
        /// When the config the snapshot came from was created: its identity.
        var createdAt: Date?
        var valueWatchers: [Key: [UUID: ValueWatcher]] = [:]
        var snapshotWatchers: [UUID: AsyncStream<any Configuration.ConfigSnapshot>.Continuation] = [:]
    }

    private let store: any ConfigStore
    private let config: ConfigName
    private let prefix: KeyPrefix
    private let secrets: SecretReader?
    private let secretsSpecifier: SecretsSpecifier<String, String>
    private let jsonMembers: Bool
    private let state: Mutex<State>

    /// Loads the keys of `config` under `prefix` from `store`.
    /// - Parameters:
    ///   - store: any discfg store: `ConfigClient.store` for a server, or an embedded
    ///     `SQLiteStore`.
    ///   - config: the config's name.
    ///   - prefix: the keys served; `/` for the whole config.
    ///   - keys: where the keys that open secrets come from (`StandardKeyResolver` reads
    ///     `file://` keys and KMS with the AWS credential chain); without it, a config
    ///     holding secrets under `prefix` fails to load.
    ///   - secretsSpecifier: plain (not sealed) values to mark secret as well, by discfg
    ///     key path and text; sealed values are always secret.
    ///   - arraySeparator: the separator of array values that are not JSON arrays.
    ///   - bytesDecoder: how each element of a byte-chunk array is written.
    ///   - jsonMembers: whether the members of a JSON object or array value are
    ///     configuration keys below the key holding it (`settings.db.port` reads member
    ///     `/db/port` of `settings`), where no key of that path exists.
    /// - Throws: `DiscfgError` when the config does not exist, the store cannot be read,
    ///   or a secret does not open.
    public convenience init(
        store: any ConfigStore,
        config: String,
        prefix: String = "/",
        keys: (any KeyResolver)? = nil,
        secretsSpecifier: SecretsSpecifier<String, String> = .none,
        arraySeparator: Character = ",",
        bytesDecoder: some ConfigBytesFromStringDecoder = .base64,
        jsonMembers: Bool = false
    ) async throws {
        try await self.init(
            store: store, config: config, prefix: prefix, keyring: keys.map(SecretKeyring.init(resolver:)),
            secretsSpecifier: secretsSpecifier, decoding: ValueDecoding(arraySeparator: arraySeparator, bytesDecoder: bytesDecoder),
            jsonMembers: jsonMembers
        )
    }

    /// Loads the keys of `config` under `prefix` from the server `client` talks to,
    /// opening secrets with the client's keys. The other parameters are as for
    /// ``init(store:config:prefix:keys:secretsSpecifier:arraySeparator:bytesDecoder:jsonMembers:)``.
    public convenience init(
        client: ConfigClient,
        config: String,
        prefix: String = "/",
        secretsSpecifier: SecretsSpecifier<String, String> = .none,
        arraySeparator: Character = ",",
        bytesDecoder: some ConfigBytesFromStringDecoder = .base64,
        jsonMembers: Bool = false
    ) async throws {
        try await self.init(
            store: client.store, config: config, prefix: prefix, keyring: client.keyring,
            secretsSpecifier: secretsSpecifier, decoding: ValueDecoding(arraySeparator: arraySeparator, bytesDecoder: bytesDecoder),
            jsonMembers: jsonMembers
        )
    }

    private init(
        store: any ConfigStore, config: String, prefix: String, keyring: SecretKeyring?,
        secretsSpecifier: SecretsSpecifier<String, String>, decoding: ValueDecoding, jsonMembers: Bool
    ) async throws {
        let config = try ConfigName(config)
        let prefix = try KeyPrefix(prefix)
        self.store = store
        self.config = config
        self.prefix = prefix
        self.secretsSpecifier = secretsSpecifier
        self.jsonMembers = jsonMembers
        secrets = keyring.map { SecretReader(ConfigSecrets(store: store, config: config, keyring: $0)) }
        let empty = ProviderSnapshot(providerName: Self.name, prefix: prefix, decoding: decoding, jsonMembers: jsonMembers, revision: .zero, entries: [:])
        state = Mutex(State(snapshot: empty))
        let (loaded, createdAt) = try await load()
        for case .unreadable(let error) in loaded.entries.values { throw error }
        state.withLock { $0.snapshot = loaded; $0.createdAt = createdAt }
    }

    private static let name = "DiscfgProvider"

    /// The config revision the provider's values reflect.
    public var revision: Revision { state.withLock { $0.snapshot.revision } }

    // MARK: Loading and following

    /// Every key under the prefix at the latest revision, with secrets opened, and when
    /// the config was created.
    private func load() async throws -> (snapshot: ProviderSnapshot, createdAt: Date) {
        let createdAt = try await store.configInfo(config).createdAt
        let (items, revision) = try await store.items(in: config, under: prefix)
        var snapshot = state.withLock { $0.snapshot }
        snapshot.revision = revision
        snapshot.entries = [:]
        for item in items {
            snapshot.entries[item.key] = await entry(for: item)
        }
        return (snapshot, createdAt)
    }

    private func entry(for item: Item) async -> ProviderSnapshot.Entry {
        guard item.isSecret else {
            let isSecret = secretsSpecifier.isSecret(key: item.key.path, value: item.text ?? "")
            return readable(item.value, isSecret: isSecret)
        }
        guard let secrets else {
            return .unreadable(DiscfgError.invalid(
                "value", "\(item.key) is a secret: give the provider keys (e.g. StandardKeyResolver) to read it"
            ))
        }
        do {
            return readable(try await secrets.revealed(item).value, isSecret: true)
        } catch let error as DiscfgError {
            return .unreadable(error)
        } catch {
            return .unreadable(DiscfgError.invalid("value", "secret \(item.key) does not open: \(error)"))
        }
    }

    /// A readable value's entry, parsed once when its members are served.
    private func readable(_ data: Data, isSecret: Bool) -> ProviderSnapshot.Entry {
        .value(data, isSecret: isSecret, members: jsonMembers ? JSONMembers.document(of: data) : nil)
    }

    /// Follows the config's changes until cancelled or until a graceful shutdown,
    /// reconnecting with backoff after failures.
    private func follow() async {
        var failures = 0
        var reload = false
        while !Task.isCancelled {
            do {
                if !reload {
                    // A config deleted and created again before this watch began is a new
                    // config whose revisions start afresh: load it rather than follow it.
                    let info = try await store.configInfo(config)
                    reload = info.createdAt != state.withLock({ $0.createdAt }) || info.revision < revision
                }
                if reload {
                    replace(with: try await load())
                    reload = false
                }
                let stream = await store.watch(config, scope: .prefix(prefix), from: revision.next)
                for try await event in stream {
                    await apply(event)
                    failures = 0
                }
            } catch let error as DiscfgError where error.code == .compacted || error.code == .configNotFound {
                // The history to resume from is gone, or the config was deleted (and may
                // come back): keep serving what was loaded, and load it again.
                reload = true
            } catch {}
            let policy = RetryPolicy.reconnect
            do { try await policy.sleep(policy.delay(forRetry: failures)) } catch { return }
            failures += 1
        }
    }

    private func apply(_ event: Event) async {
        let entry: ProviderSnapshot.Entry? = if let item = event.item { await entry(for: item) } else { nil }
        let notify = state.withLock { state in
            let before = state.snapshot.entries[event.key]
            state.snapshot.entries[event.key] = entry
            state.snapshot.revision = max(state.snapshot.revision, event.revision)
            return before == entry ? nil : Self.notifications(in: state, for: [event.key])
        }
        notify?()
    }

    /// Replaces every key with a fresh load, telling the watchers of keys that changed.
    private func replace(with load: (snapshot: ProviderSnapshot, createdAt: Date)) {
        let loaded = load.snapshot
        let notify = state.withLock { state in
            let before = state.snapshot.entries
            state.snapshot = loaded
            state.createdAt = load.createdAt
            let changed = Set(before.keys).union(loaded.entries.keys).filter { before[$0] != loaded.entries[$0] }
            return Self.notifications(in: state, for: changed)
        }
        notify()
    }

    /// What to tell the watchers when `changed` keys changed, to be sent outside the lock.
    private static func notifications(in state: State, for changed: some Sequence<Key>) -> @Sendable () -> Void {
        let snapshot = state.snapshot
        var watched = Set(changed)
        if snapshot.jsonMembers {
            // A member changes with the value holding it: its watchers wait at paths below that key.
            let holders = watched
            watched.formUnion(state.valueWatchers.keys.filter { path in holders.contains { path.path.hasPrefix($0.path + "/") } })
        }
        var values: [(AsyncStream<Result<LookupResult, any Error>>.Continuation, Result<LookupResult, any Error>)] = []
        for key in watched {
            for watcher in state.valueWatchers[key, default: [:]].values {
                values.append((watcher.continuation, Result { try snapshot.value(forKey: watcher.configKey, type: watcher.type) }))
            }
        }
        let snapshots = Array(state.snapshotWatchers.values)
        return { [values] in
            for (continuation, value) in values { continuation.yield(value) }
            for continuation in snapshots { continuation.yield(snapshot) }
        }
    }
}

extension DiscfgProvider: Service {
    /// Follows the config's changes until the service group shuts down.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.follow() }
    }
}

extension DiscfgProvider: ConfigProvider {
    public var providerName: String { Self.name }

    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try state.withLock { $0.snapshot }.value(forKey: key, type: type)
    }

    /// Reads the key from the store now, not from the provider's snapshot (with JSON
    /// members, and no key at that path, the keys above it too).
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        var fresh = state.withLock { $0.snapshot }
        fresh.entries = [:]
        if let discfgKey = prefix.location(of: key).key, let item = try await store.get(discfgKey, in: config) {
            fresh.entries[discfgKey] = await entry(for: item)
        } else if jsonMembers {
            for holder in JSONMembers.holders(of: key, under: prefix) {
                guard let item = try await store.get(holder.key, in: config) else { continue }
                fresh.entries[holder.key] = await entry(for: item)
            }
        }
        return try fresh.value(forKey: key, type: type)
    }

    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<Result<LookupResult, any Error>>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let discfgKey = prefix.location(of: key).key
        let initial = state.withLock { state in
            if let discfgKey {
                state.valueWatchers[discfgKey, default: [:]][id] = ValueWatcher(configKey: key, type: type, continuation: continuation)
            }
            let snapshot = state.snapshot
            return Result { try snapshot.value(forKey: key, type: type) }
        }
        defer {
            if let discfgKey {
                state.withLock { state in
                    state.valueWatchers[discfgKey]?[id] = nil
                    if state.valueWatchers[discfgKey]?.isEmpty == true { state.valueWatchers[discfgKey] = nil }
                }
            }
            continuation.finish()
        }
        continuation.yield(initial)
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    public func snapshot() -> any Configuration.ConfigSnapshot {
        state.withLock { $0.snapshot }
    }

    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any Configuration.ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<any Configuration.ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let initial = state.withLock { state in
            state.snapshotWatchers[id] = continuation
            return state.snapshot
        }
        defer {
            state.withLock { $0.snapshotWatchers[id] = nil }
            continuation.finish()
        }
        continuation.yield(initial)
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }
}

extension DiscfgProvider: CustomStringConvertible {
    public var description: String {
        let (count, revision) = state.withLock { ($0.snapshot.entries.count, $0.snapshot.revision) }
        return "DiscfgProvider[\(config)\(prefix == .root ? "" : " \(prefix)") at revision \(revision), \(count) values]"
    }
}
