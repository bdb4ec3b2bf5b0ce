import DiscfgCore
import DiscfgService
import DiscfgWire
import Foundation
import Hummingbird

extension ConfigAPI {
    func listConfigs(shownTo caller: Caller) async throws -> Response {
        let configs = try await store.listConfigs().filter { caller.configs?.contains($0.name) ?? true }
        var envelope = Envelope(action: "configs")
        envelope.configs = configs.map { ConfigDocument($0, shownTo: caller) }
        return APIResponse.json(envelope)
    }

    /// `POST /admin/sweep`: expire due keys now, rather than at the next scheduled sweep.
    /// It touches, and answers with, every config's expired values: admins of all only.
    func sweep() async throws -> Response {
        let events = try await RequestDeadlines.commit { try await store.sweepExpired() }
        var envelope = Envelope(action: "sweep")
        envelope.events = events.map(EventDocument.init)
        return APIResponse.json(envelope)
    }

    func createConfig(_ request: inout Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let name = try request.configName(context)
        let patch = try await settingsPatch(&request)
        try patch.check(options.webhookPolicy)
        let info = try await RequestDeadlines.commit { try await store.createConfig(name, settings: patch.applied(to: ConfigSettings())) }
        var envelope = Envelope(action: "create")
        envelope.config = name.rawValue
        envelope.configInfo = ConfigDocument(info)
        envelope.revision = info.revision
        return APIResponse.json(envelope, status: .created, headers: [.location: "/v1/\(name)"])
    }

    func configInfo(_ request: Request, _ context: some DiscfgRequestContext, shownTo caller: Caller) async throws -> Response {
        let name = try request.configName(context)
        let info = try await store.configInfo(name)
        var envelope = Envelope(action: "info")
        envelope.config = name.rawValue
        envelope.configInfo = ConfigDocument(info, shownTo: caller)
        envelope.revision = info.revision
        return APIResponse.json(envelope)
    }

    func updateConfig(_ request: inout Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let name = try request.configName(context)
        let patch = try await settingsPatch(&request)
        try patch.check(options.webhookPolicy)
        // Nothing to change is no change: the config as it is.
        let info = patch.isEmpty ? try await store.configInfo(name) : try await RequestDeadlines.commit { try await store.updateConfig(name, patch) }
        var envelope = Envelope(action: "update")
        envelope.config = name.rawValue
        envelope.configInfo = ConfigDocument(info)
        envelope.revision = info.revision
        return APIResponse.json(envelope)
    }

    func deleteConfig(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let name = try request.configName(context)
        try await RequestDeadlines.commit { try await store.deleteConfig(name) }
        var envelope = Envelope(action: "delete-config")
        envelope.config = name.rawValue
        return APIResponse.json(envelope)
    }

    /// Settings from a JSON body; an empty body is no change.
    private func settingsPatch(_ request: inout Request) async throws -> ConfigSettingsPatch {
        let body = try await request.bodyData(limit: options.maxSettingsBytes)
        guard !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else { return ConfigSettingsPatch() }
        do {
            return try JSONDecoder().decode(ConfigSettingsPatch.self, from: body)
        } catch let error as DiscfgError {
            throw error
        } catch {
            throw DiscfgError.invalid("body", "settings must be a JSON object such as {\"history\": \"30d\", \"description\": \"...\"}")
        }
    }
}

extension ConfigDocument {
    /// The document for a config, with webhook secrets hidden from callers who cannot
    /// change the settings anyway.
    init(_ info: ConfigInfo, shownTo caller: Caller) {
        self.init(info)
        if caller.role < .admin { settings = settings.redacted }
    }
}
