import DiscfgAgent
import DiscfgCore
import DiscfgStores
import Foundation

/// The settings of `discfg agent --lambda-extension`, read from the environment once at
/// start-up: a layer's extension is started with no arguments.
struct AgentExtensionSettings: Sendable, Equatable {
    /// The name the binary runs under in a layer (`/opt/extensions/discfg-agent`), and
    /// registers with the Extensions API.
    static let extensionName = "discfg-agent"
    /// The loopback port functions read from, as `discfg agent`'s default.
    static let defaultPort = 2773
    /// Where copies are kept when `DISCFG_AGENT_CACHE_DIR` is not set: Lambda's only
    /// writable place.
    static let defaultCacheDirectory = "/tmp/discfg-agent"

    /// `DISCFG_AGENT_CONFIGS`: the configs to copy, comma-separated (required).
    var configs: [ConfigName]
    /// `DISCFG_STORE`: where they live (default `dynamodb:///discfg`, in `AWS_REGION`).
    var store: String
    /// `DISCFG_AGENT_SOURCE`: `s3://BUCKET/PREFIX` to follow the snapshots `discfg publish`
    /// writes there instead of the store (`DISCFG_STORE` is then not read by the agent).
    var source: SnapshotDestination?
    /// `DISCFG_AGENT_INTERVAL`: the time between refreshes, read as `discfg agent --interval`
    /// (`15`, `15s`, `500ms`, `2m`, `1h`; 1s to 24h); the agent's default when unset.
    var interval: Duration?
    /// `DISCFG_AGENT_CACHE_DIR`: where copies are kept on disk.
    var cacheDirectory: String
    /// `DISCFG_AGENT_PORT`: the loopback port to serve (default 2773).
    var port: Int

    /// Reads the settings.
    ///
    /// - Throws: ``DiscfgError`` `invalidArgument` naming the variable that is missing or wrong.
    init(environment: [String: String]) throws {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        }
        guard let list = value("DISCFG_AGENT_CONFIGS") else {
            throw DiscfgError.invalid("DISCFG_AGENT_CONFIGS", "DISCFG_AGENT_CONFIGS is not set: name the configs the agent copies, e.g. DISCFG_AGENT_CONFIGS=myapp,shared")
        }
        var configs: [ConfigName] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingCharacters(in: .whitespaces)
            do {
                let config = try ConfigName(name)
                if !configs.contains(config) { configs.append(config) }
            } catch let error as DiscfgError {
                throw DiscfgError.invalid("DISCFG_AGENT_CONFIGS", "DISCFG_AGENT_CONFIGS: \(error.message)")
            }
        }
        self.configs = configs
        store = value("DISCFG_STORE") ?? "dynamodb:///\(DynamoDBLocation.defaultTable)"
        do {
            source = try value("DISCFG_AGENT_SOURCE").map { try SnapshotDestination(parsing: $0, field: "DISCFG_AGENT_SOURCE") }
        } catch let error as DiscfgError {
            throw DiscfgError.invalid("DISCFG_AGENT_SOURCE", "DISCFG_AGENT_SOURCE: \(error.message)")
        }
        interval = try value("DISCFG_AGENT_INTERVAL").map { try AgentSettings.interval($0, field: "DISCFG_AGENT_INTERVAL") }
        cacheDirectory = value("DISCFG_AGENT_CACHE_DIR") ?? Self.defaultCacheDirectory
        // No 0 here: a function reads from a port it knows.
        port = try value("DISCFG_AGENT_PORT").map { try AgentSettings.port($0, field: "DISCFG_AGENT_PORT", allowsAny: false) } ?? Self.defaultPort
    }
}
