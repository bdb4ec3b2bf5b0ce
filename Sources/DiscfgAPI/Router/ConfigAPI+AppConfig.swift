import DiscfgCore
import DiscfgFlags
import DiscfgJSON
import DiscfgService
import Foundation
import HTTPTypes
import Hummingbird

/// AWS AppConfig Agent's route for feature flag profiles, so an application that reads its
/// flags from AppConfig's agent reads them from discfg's with no change of code:
/// `GET /applications/{config}/environments/{env}/configurations/{profile}?flag=KEY`.
///
/// `{config}` names the config, `{profile}` a flag set under its `/flags/` (its key's last
/// segment), and `{env}` is accepted as it is (an environment is a config, or a later
/// deployment's target). The `Context` header (`Context: email=jane@example.org`, repeated or
/// comma-separated) is the evaluation context, `Entity-Id` its targeting key. The answer is
/// AppConfig's retrieval format: each flag as `{"enabled": …, "_variant": …}` with an object
/// value's members beside them (another value as `value`); a flag answering the caller's
/// default, or failing, is `{"enabled": false}`.
extension ConfigAPI {
    func appConfigFlags(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let rawProfile = context.parameters.get("profile") ?? ""
        let profile = rawProfile.removingPercentEncoding ?? rawProfile
        let key: Key
        do {
            key = try Key(ConfigFlags.prefix.path + profile)
        } catch {
            throw DiscfgError.invalid("profile", "the configuration profile \"\(String(profile.prefix(40)).debugEscaped)\" does not name a flag set under /flags/")
        }
        let evaluationContext = try Self.appConfigContext(request)
        let item = try await perform(Action(.flagEvaluate, on: config, reaching: .key(key))) { try await store.get(key, in: config) }
        guard let item else {
            throw DiscfgError(.keyNotFound, "config \(config) has no flag set \(key.path) (the configuration profile \"\(profile)\")", field: "profile")
        }
        let catalog = FlagCatalog(try ConfigFlags.flagSet(item), name: key.path)
        var wanted = request.uri.queryParameters.getAll("flag").map { String($0) }
        if wanted.isEmpty { wanted = catalog.entries.keys.sorted() }
        let evaluator = FlagEvaluator()
        var answer = JSONObject()
        for flag in wanted {
            guard catalog.entries[flag] != nil else {
                throw DiscfgError(.keyNotFound, "the flag set \(key.path) defines no flag \"\(String(flag.prefix(100)).debugEscaped)\"", field: "flag")
            }
            answer[flag] = .object(Self.appConfigFlag(evaluator.evaluate(flag, in: catalog, context: evaluationContext)))
        }
        return APIResponse.bytes(ByteBuffer(bytes: OFREP.bytes(.object(answer))), contentType: APIResponse.jsonContentType)
    }

    /// One flag in AppConfig's retrieval format.
    static func appConfigFlag(_ evaluation: FlagEvaluation) -> JSONObject {
        var flag = JSONObject()
        guard let value = evaluation.value, let variant = evaluation.variant else {
            flag["enabled"] = .bool(false)
            return flag
        }
        switch value {
        case .bool(let enabled): flag["enabled"] = .bool(enabled)
        case .object(let members):
            flag["enabled"] = .bool(true)
            for (name, member) in members where name != "enabled" && name != "_variant" { flag[name] = member }
        default:
            flag["enabled"] = .bool(true)
            flag["value"] = value
        }
        flag["_variant"] = .string(variant)
        return flag
    }

    /// The evaluation context of AppConfig's headers: each `Context` value a list of
    /// `name=value` pairs (strings), `Entity-Id` the targeting key.
    static func appConfigContext(_ request: Request) throws -> JSONObject {
        var context = JSONObject()
        for header in request.headers[values: .appConfigContext] {
            for pair in header.split(separator: ",") {
                let text = pair.trimmingCharacters(in: .whitespaces)
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                    throw DiscfgError.invalid("Context", "a Context header holds name=value pairs separated by commas, such as Context: email=jane@example.org; got \"\(String(text.prefix(40)).debugEscaped)\"")
                }
                context[String(text[..<equals])] = .string(String(text[text.index(after: equals)...]))
            }
        }
        if let entity = request.headers[.appConfigEntityID] { context["targetingKey"] = .string(entity) }
        return context
    }
}

extension HTTPField.Name {
    static let appConfigContext = HTTPField.Name("Context")!
    static let appConfigEntityID = HTTPField.Name("Entity-Id")!
}
