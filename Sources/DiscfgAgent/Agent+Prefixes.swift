import DiscfgCore
import Foundation
import Logging

/// `discfg agent --prefix`: every config of the source whose name starts with a prefix,
/// listed at start and again each interval. A config created later is taken on (its
/// follower loads it at once); one no longer listed is dropped from what the agent serves
/// (reads of it are `configNotFound`, its watchers end) and from the cache. A failed
/// listing changes nothing. Configs named with `--config` are held whatever the listings say.
extension Agent {
    /// Checks a prefix: the start of a config name, so a config name's characters
    /// (letters, digits, `_`, `.`, `-`), 1 to 200 of them.
    /// - Throws: `invalidArgument` naming `field` and what is wrong.
    public static func checkPrefix(_ text: String, field: String = "--prefix") throws -> String {
        do { return try ConfigName(text).rawValue } catch let error as DiscfgError {
            throw DiscfgError.invalid(field, "\(field) \"\(text.debugEscaped)\" is not the start of a config name: \(error.message.replacingOccurrences(of: "config name", with: "a prefix"))")
        }
    }

    /// Whether `name` is under one of the prefixes.
    func matches(_ name: ConfigName) -> Bool {
        prefixes.contains { name.rawValue.hasPrefix($0) }
    }

    /// The first listing; when it fails, the cache's copies under the prefixes.
    func discoverAtStart() async throws {
        guard let listing = source as? any ConfigListingSource else {
            throw DiscfgError.invalid("--prefix", "\(source.description) cannot list its configs, so --prefix cannot be followed there: name each config with --config")
        }
        let shown = prefixes.map { "\"\($0)\"" }.joined(separator: ", ")
        do {
            let names = try await listing.configNames()
            held.withLock { $0.listings += 1 }
            for name in names where matches(name) { _ = follow(name) }
        } catch {
            held.withLock { $0.listingErrors += 1 }
            let reason = (error as? DiscfgError)?.message ?? String(describing: error)
            guard let cache else {
                throw DiscfgError(.unavailable, "could not list the configs of \(source.description) for --prefix \(shown) (\(reason)), and no cache")
            }
            let cached = cache.configNames().filter(matches)
            logger.warning("could not list the configs; holding those on disk under the prefixes", metadata: ["error": "\(reason)", "configs": "\(cached)"])
            for name in cached { _ = follow(name) }
        }
    }

    /// Lists again: takes on new configs under the prefixes, drops those gone.
    func discover() async {
        guard let listing = source as? any ConfigListingSource else { return }
        let names: [ConfigName]
        do {
            names = try await Deadline.within(.after(deadline)) { try await listing.configNames() }
            held.withLock { $0.listings += 1 }
        } catch {
            held.withLock { $0.listingErrors += 1 }
            logger.warning("could not list the configs; holding the same ones", metadata: ["error": "\((error as? DiscfgError)?.message ?? String(describing: error))"])
            return
        }
        for name in names where matches(name) {
            guard let follower = follow(name) else { continue }
            logger.notice("holding a new config under the prefixes", metadata: ["config": "\(name)"])
            startLoop(follower)
        }
        let present = Set(names)
        let named = Set(self.named)
        let gone = held.withLock { held in held.order.filter { !named.contains($0) && !present.contains($0) } }
        for name in gone { stopFollowing(name) }
    }

    /// Drops a config that is no longer listed.
    func stopFollowing(_ config: ConfigName) {
        let task = held.withLock { held -> Task<Void, Never>? in
            held.followers[config] = nil
            held.order.removeAll { $0 == config }
            return held.tasks?.removeValue(forKey: config)
        }
        task?.cancel()
        replica.drop(config)
        cache?.remove(config)
        logger.notice("config no longer in the source; dropped", metadata: ["config": "\(config)"])
    }
}
