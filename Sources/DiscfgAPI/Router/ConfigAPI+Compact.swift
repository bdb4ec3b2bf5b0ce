import DiscfgCore
import DiscfgWire
import Foundation
import Hummingbird

extension ConfigAPI {
    /// `POST compact?revision=N`: drops the config's history through revision N (as
    /// etcd's compaction does); answers the config as it is afterwards. A revision the
    /// config has not reached is refused (400), as a read at it is.
    func compact(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        guard let revision = try request.revision("revision") else {
            throw DiscfgError.invalid("revision", "compact needs ?revision=N: history at or below revision N is dropped")
        }
        let info = try await RequestDeadlines.commit { try await store.compact(config, through: revision) }
        var envelope = Envelope(action: "compact")
        envelope.config = config.rawValue
        envelope.configInfo = ConfigDocument(info)
        envelope.revision = info.revision
        envelope.compactedRevision = info.compactedRevision
        return APIResponse.json(envelope)
    }
}
