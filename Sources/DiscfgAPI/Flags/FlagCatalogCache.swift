import DiscfgCore
import DiscfgFlags
import Synchronization

/// Each config's flags, parsed once per change of its flag sets: an evaluation reads the
/// items under ``DiscfgCore/ConfigFlags/prefix`` (from memory on the agent) and parses them
/// only when a key or a modRevision among them differs from the last parse.
final class FlagCatalogCache: Sendable {
    private struct Entry {
        var stamp: [Stamp]
        var catalog: Result<FlagCatalog, DiscfgError>
    }

    /// A flag set's identity at one version: its key and the revision that wrote it.
    private struct Stamp: Equatable {
        var key: String
        var modRevision: Revision
    }

    /// The most configs held; past it the cache starts again.
    static let capacity = 1024

    /// A config, and whether its catalog is a staged deployment's candidate (each is kept,
    /// so readers on either version do not take turns parsing).
    private struct Slot: Hashable {
        var config: ConfigName
        var candidate: Bool
    }

    private let entries = Mutex<[Slot: Entry]>([:])
    private let parses = Atomic<Int>(0)

    init() {}

    /// How many times flag sets were parsed, for tests.
    var parseCount: Int { parses.load(ordering: .relaxed) }

    /// The catalog of `items` (the config's flag sets), parsed or remembered.
    ///
    /// - Throws: ``DiscfgError`` (`invalidArgument`) for a set that does not parse or a flag
    ///   two sets define.
    func catalog(_ items: [Item], in config: ConfigName, candidate: Bool = false) throws -> FlagCatalog {
        let slot = Slot(config: config, candidate: candidate)
        let stamp = items.map { Stamp(key: $0.key.path, modRevision: $0.modRevision) }
        if let held = entries.withLock({ $0[slot] }), held.stamp == stamp { return try held.catalog.get() }
        parses.add(1, ordering: .relaxed)
        let catalog: Result<FlagCatalog, DiscfgError>
        do {
            catalog = .success(try ConfigFlags.catalog(items))
        } catch let error as DiscfgError {
            catalog = .failure(error)
        } catch {
            catalog = .failure(DiscfgError.invalid("value", "the config's flag sets do not parse"))
        }
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[slot] == nil { entries.removeAll() }
            entries[slot] = Entry(stamp: stamp, catalog: catalog)
        }
        return try catalog.get()
    }
}
