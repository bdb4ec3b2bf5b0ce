import DiscfgCore
import Foundation
import Hummingbird

extension ConfigAPI {
    /// `POST compact?revision=N`: drops the config's history through revision N (as
    /// etcd's compaction does), or through the config's revision when N is past it;
    /// answers the config as it is afterwards.
    func compact(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        guard let revision = try request.revision("revision") else {
            throw DiscfgError.invalid("revision", "compact needs ?revision=N: history at or below revision N is dropped")
        }
        // A revision past the config's asks for all of its history to go.
        let current = try await store.configInfo(config).revision
        let info = try await RequestDeadlines.commit { try await store.compact(config, through: min(revision, current)) }
        var envelope = Envelope(action: "compact")
        envelope.config = config.rawValue
        envelope.configInfo = ConfigDocument(info)
        envelope.revision = info.revision
        envelope.compactedRevision = info.compactedRevision
        return APIResponse.json(envelope)
    }
}
