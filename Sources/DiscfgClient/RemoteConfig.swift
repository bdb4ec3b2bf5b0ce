import DiscfgAWS
import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import DiscfgSecrets
import Foundation

/// One config as an application sees it: typed reads through an in-memory cache, and a
/// live mode that follows the server's changes so reads never wait on the network.
public actor RemoteConfig {
    struct Cached {
        var item: Item?
        var fetchedAt: ContinuousClock.Instant
    }

    /// The config's name.
    public nonisolated let name: ConfigName
    let store: any ConfigStore
    let maxAge: Duration
    var cache: [Key: Cached] = [:]
    private var live: Task<Void, Never>?
    var liveRevision: Revision?
    private var subscribers: [UUID: AsyncStream<Event>.Continuation] = [:]
    /// Opens secrets; nil when the client was made without keys.
    private let secrets: SecretReader?
    /// The flag sets as one catalog (or why they are not one), and when they were read;
    /// nil once a `/flags/` key changes, so evaluations parse them once per change.
    var flagSets: (catalog: Result<FlagCatalog, DiscfgError>, items: [Item], readAt: ContinuousClock.Instant)?
    /// The catalog of the flag sets as a running deployment's candidate shows them, and
    /// the items it was made from: made again when those change.
    var candidateFlagSets: (items: [Item], catalog: Result<FlagCatalog, DiscfgError>)?
    /// Where flag evaluations are counted and traced.
    let flagTelemetry: FlagTelemetry
    /// Who reads are for, for staged deployments; nil for plain reads.
    public nonisolated let entity: String?
    /// The running deployments, and when they were read; nil once a deployment's record or
    /// staging changes while following.
    var deployments: (overlay: DeploymentOverlay, readAt: ContinuousClock.Instant)?
    /// The requests the application reports, until sent (``recordRequest(failed:)``).
    let health: HealthTally

    init(
        store: any ConfigStore, name: ConfigName, maxAge: Duration, keyring: SecretKeyring? = nil, flagTelemetry: FlagTelemetry = FlagTelemetry(),
        entity: String? = nil, healthInterval: Duration = .seconds(5)
    ) {
        self.store = store
        self.name = name
        self.maxAge = maxAge
        self.flagTelemetry = flagTelemetry
        self.entity = entity
        // Reports go to a server; a store that is not one has nowhere to pass them.
        health = HealthTally(store: store as? RemoteStore, config: name, interval: healthInterval)
        secrets = keyring.map { SecretReader(ConfigSecrets(store: store, config: name, keyring: $0)) }
    }

    deinit {
        live?.cancel()
        health.stop()
    }

    /// The item at `key`, from the cache when it is fresh (or when following changes), as
    /// ``entity`` reads it while a staged deployment runs. A secret comes back opened, with
    /// its own content type.
    public func item(_ key: String) async throws -> Item? {
        try await item(key, as: entity)
    }

    /// The item at `key` as `entity` reads it (nil: a plain read): a running deployment's
    /// candidate exactly when it exposes the entity now, computed here from the
    /// deployment's record and the clock, as every face computes it.
    public func item(_ key: String, as entity: String?) async throws -> Item? {
        let key = try Key(key)
        let live = try await liveItem(key)
        let overlay = try await deploymentOverlay()
        if let covering = overlay.deployment(covering: key) { health.read(covering.deployment) }
        return try await opened(overlay.isEmpty ? live : overlay.item(at: key, live: live, entity: entity, at: SystemClock().now().milliseconds))
    }

    private func liveItem(_ key: Key) async throws -> Item? {
        if let cached = cache[key], liveRevision != nil || ContinuousClock.now - cached.fetchedAt < maxAge { return cached.item }
        if liveRevision != nil { return nil }
        let item = try await store.get(key, in: name)
        cache[key] = Cached(item: item, fetchedAt: .now)
        return item
    }

    /// The running deployments: from the cache while following changes, else read again
    /// once ``maxAge`` has passed.
    func deploymentOverlay() async throws -> DeploymentOverlay {
        if let deployments, liveRevision != nil || ContinuousClock.now - deployments.readAt < maxAge { return deployments.overlay }
        let overlay: DeploymentOverlay
        if liveRevision != nil {
            let held = cache.values.compactMap(\.item)
            let running = try held.filter { DeploymentKeys.running.contains($0.key) }.map(Deployment.init(record:))
            overlay = DeploymentOverlay(running: running, staging: held.filter { DeploymentKeys.staging.contains($0.key) })
        } else {
            overlay = try await store.deploymentOverlay(in: name)
        }
        deployments = (overlay, .now)
        health.observe(overlay)
        return overlay
    }

    /// `item` with its value opened when it is a secret (the cache keeps it sealed).
    private func opened(_ item: Item?) async throws -> Item? {
        guard let item, item.isSecret else { return item }
        guard let secrets else {
            throw DiscfgError.invalid("value", "\(item.key) is a secret: make the ConfigClient with keys (e.g. StandardKeyResolver) to read it")
        }
        return try await secrets.revealed(item)
    }

    /// The raw bytes at `key`, or nil.
    public func data(_ key: String) async throws -> Data? { try await item(key)?.value }

    /// The value as text, or nil when absent; throws when it is not UTF-8.
    public func string(_ key: String) async throws -> String? {
        guard let item = try await item(key) else { return nil }
        guard let text = item.text else { throw DiscfgError.invalid("value", "\(key) holds binary data, not text") }
        return text
    }

    /// The value as an integer, or nil when absent; throws when it is not one.
    public func int(_ key: String) async throws -> Int? {
        try await parsed(key, as: "an integer", ValueText.int)
    }

    /// The value as a boolean (`true/false`, `yes/no`, `on/off`, `1/0`), or nil when absent.
    public func bool(_ key: String) async throws -> Bool? {
        try await parsed(key, as: "a boolean", ValueText.bool)
    }

    /// The value's text read by `parse`; the error quotes the text unless it is a secret.
    private func parsed<T>(_ key: String, as what: String, _ parse: (String) -> T?) async throws -> T? {
        guard let item = try await item(key) else { return nil }
        guard let text = item.text else { throw DiscfgError.invalid("value", "\(key) holds binary data, not text") }
        guard let value = parse(text) else {
            let shown = cache[item.key]?.item?.isSecret == true ? "a secret" : "\"\(text)\""
            throw DiscfgError.invalid("value", "\(key) is \(shown), not \(what)")
        }
        return value
    }

    /// The value decoded from JSON, or the part of it that `pointer` names; nil when the key
    /// is absent or the pointer names nothing in its value.
    ///
    /// ```swift
    /// struct Database: Decodable { var host: String; var port: Int }
    /// let db = try await cfg.decode("/app/settings", at: "/db", as: Database.self)   // {"db": {"host": …, "port": …}}
    /// let port = try await cfg.decode("/app/settings", at: "/db/port", as: Int.self) ?? 5432
    /// ```
    /// - Parameters:
    ///   - key: the key whose value is JSON.
    ///   - pointer: an RFC 6901 JSON Pointer into the value (`/db/port`, `/servers/0`);
    ///     empty for the whole value.
    /// - Throws: `invalidArgument` for a pointer that is not one, a value that is not JSON
    ///   (with its line and column), or a part that does not decode as `T`.
    public func decode<T: Decodable>(_ key: String, at pointer: String = "", as type: T.Type = T.self) async throws -> T? {
        let data: Data
        if pointer.isEmpty {
            guard let whole = try await self.data(key) else { return nil }
            data = whole
        } else {
            guard let part = try await json(key, at: pointer) else { return nil }
            data = try JSONContent.bytes(part)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            let subject = pointer.isEmpty ? key : "\(key) at \(pointer)"
            throw DiscfgError.invalid("value", "\(subject) does not decode as \(T.self): \(error)")
        }
    }

    /// The JSON value at `pointer` inside the value of `key`, or nil when the key is absent
    /// or the pointer names nothing in its value.
    ///
    /// The pointer is resolved here, over the value the cache holds (a secret once opened),
    /// so it reads from memory while following changes and costs no request of its own.
    ///
    /// ```swift
    /// let port = try await cfg.json("/app/settings", at: "/db/port")   // .number(5433)
    /// ```
    /// - Parameters:
    ///   - key: the key whose value is JSON (whatever its content type says).
    ///   - pointer: an RFC 6901 JSON Pointer; empty (the default) for the whole value.
    /// - Throws: `invalidArgument` for a pointer that is not one, or a value that is not
    ///   JSON (naming the line and column, unless the value is a secret).
    public func json(_ key: String, at pointer: String = "") async throws -> JSONValue? {
        let pointer = try JSONContent.pointer(pointer)
        guard let item = try await item(key) else { return nil }
        let document: JSONValue
        do {
            document = try JSONContent.parse(item.value, key: item.key)
        } catch where cache[item.key]?.item?.isSecret == true {
            // The parser's message may quote the text; a secret's never leaves the process.
            throw DiscfgError.invalid("value", "\(item.key) is a secret whose value is not JSON")
        }
        return pointer.resolve(in: document)
    }

    /// Loads every key, then follows the server's changes in the background, keeping the
    /// cache current; reconnects and resumes from the last revision after a dropped
    /// connection. When the history it needs is gone (compacted) or the config was deleted,
    /// it loads the config again and follows from there, retrying with backoff until it can
    /// or until ``stopFollowing()``. Returns once the first snapshot is loaded.
    public func followChanges() async throws {
        guard live == nil else { return }
        let stream = try await loadAndWatch()
        // Holds the config weakly: dropping the config stops following.
        live = Task { [weak self] in
            var stream = stream
            while !Task.isCancelled {
                do {
                    for try await event in stream {
                        guard let self else { return }
                        await self.apply(event)
                    }
                } catch {}
                // The watch ended for good. Until a new snapshot is loaded, reads ask the server.
                await self?.lost()
                var failures = 0
                while true {
                    let policy = RetryPolicy.reconnect
                    do { try await policy.sleep(policy.delay(forRetry: failures)) } catch { return }
                    guard let self else { return }
                    do {
                        stream = try await self.loadAndWatch()
                        break
                    } catch {
                        failures += 1
                    }
                }
            }
        }
    }

    /// Stops following changes; reads go back to the cache with its max age.
    public func stopFollowing() {
        live?.cancel()
        live = nil
        liveRevision = nil
    }

    /// The config revision the cache reflects while following changes.
    public var revision: Revision? { liveRevision }

    /// Every change applied to the cache from now on, while following changes.
    public func updates() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    private func apply(_ event: Event) {
        cache[event.key] = Cached(item: event.item, fetchedAt: .now)
        if ConfigFlags.holdsFlagSet(event.key) { flagSets = nil }
        if DeploymentKeys.holds(event.key) { deployments = nil }
        liveRevision = event.revision
        for continuation in subscribers.values { continuation.yield(event) }
    }

    /// Loads every key and starts watching after the revision loaded.
    private func loadAndWatch() async throws -> AsyncThrowingStream<Event, any Error> {
        let revision = try await loadSnapshot()
        let stream = await store.watch(name, scope: .prefix(.root), from: revision.next)
        // Stopped meanwhile: stay stopped.
        try Task.checkCancellation()
        liveRevision = revision
        return stream
    }

    private func lost() { liveRevision = nil }

    private func loadSnapshot() async throws -> Revision {
        let (items, revision) = try await store.items(in: name)
        cache = Dictionary(uniqueKeysWithValues: items.map { ($0.key, Cached(item: $0, fetchedAt: .now)) })
        flagSets = nil
        deployments = nil
        return revision
    }
}
