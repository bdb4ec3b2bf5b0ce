import DiscfgCore
import Foundation

extension ConfigStore {
    /// Creates a config named `name` and returns its name.
    package func makeConfig(_ name: String = "app", settings: ConfigSettings = ConfigSettings()) async throws -> ConfigName {
        let config = try ConfigName(name)
        _ = try await createConfig(config, settings: settings)
        return config
    }

    /// Sets `key` to the UTF-8 bytes of `text`.
    @discardableResult
    package func set(_ key: String, _ text: String, in config: ConfigName, options: SetOptions = SetOptions()) async throws -> Event {
        try await set(Key(key), to: Data(text.utf8), in: config, options: options)
    }

    /// The config's current revision.
    package func revision(of config: ConfigName) async throws -> Revision {
        try await configInfo(config).revision
    }

    /// Every event of `key`'s retained history, newest first.
    package func fullHistory(of key: Key, in config: ConfigName) async throws -> [Event] {
        try await history(of: key, in: config, HistoryQuery(limit: Limits.maxPageSize)).events
    }

    /// Everything a failed change must leave alone: the config, every live item and the
    /// whole retained history.
    package func observableState(of config: ConfigName) async throws -> ObservableState {
        let info = try await configInfo(config)
        let items = try await list(in: config, ListQuery(limit: Limits.maxPageSize)).items
        let events = try await self.events(in: config, scope: .prefix(.root), from: info.compactedRevision.next, limit: Limits.maxPageSize).events
        return ObservableState(info: info, items: items, events: events)
    }
}

/// What ``ConfigStore/observableState(of:)`` captures.
package struct ObservableState: Equatable {
    package var info: ConfigInfo
    package var items: [Item]
    package var events: [Event]
}

extension Data {
    /// The UTF-8 bytes of `text`.
    package init(text: String) { self.init(text.utf8) }
}
