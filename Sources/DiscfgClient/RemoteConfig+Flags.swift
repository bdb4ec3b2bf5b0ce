import DiscfgCore
import DiscfgFlags
import DiscfgJSON

/// Feature flags, evaluated in the process from the config's flag sets (the keys under
/// `/flags/`, in flagd's format): while following changes, from the followed copy with no
/// request per evaluation (the parsed catalog is kept until a `/flags/` key changes);
/// otherwise the flag sets are read once per `maxAge`, as other reads are.
///
/// A read never throws: a failure answers the caller's default with reason `ERROR`
/// (`GENERAL` when the flag sets could not be read, `PARSE_ERROR` when they do not parse,
/// `FLAG_NOT_FOUND`, `TYPE_MISMATCH`). Each evaluation is counted and traced through the
/// config's ``FlagTelemetry``.
///
/// ```swift
/// try await cfg.followChanges()
/// let checkout = await cfg.bool("new-checkout", default: false, context: ["targetingKey": "u1", "plan": "pro"])
/// if checkout.value { … }
/// let limit = await cfg.int("rate-limit", default: 100).value
/// ```
extension RemoteConfig {
    /// The evaluator every flag read uses (the system's clock for `$flagd.timestamp`).
    private static let evaluator = FlagEvaluator()

    /// The boolean flag `flag` for `context`, or `defaultValue` with the reason why not.
    public func bool(_ flag: String, default defaultValue: Bool, context: JSONObject = [:]) async -> FlagDetails<Bool> {
        await evaluate(flag, default: defaultValue, context: context, as: .boolean) {
            if case .bool(let value) = $0 { value } else { nil }
        }
    }

    /// The string flag `flag` for `context`, or `defaultValue` with the reason why not.
    public func string(_ flag: String, default defaultValue: String, context: JSONObject = [:]) async -> FlagDetails<String> {
        await evaluate(flag, default: defaultValue, context: context, as: .string) {
            if case .string(let value) = $0 { value } else { nil }
        }
    }

    /// The integer flag `flag` for `context`, or `defaultValue` with the reason why not; a
    /// variant written with a fraction (`3.0`) is a float, a `TYPE_MISMATCH` here.
    public func int(_ flag: String, default defaultValue: Int64, context: JSONObject = [:]) async -> FlagDetails<Int64> {
        await evaluate(flag, default: defaultValue, context: context, as: .integer) {
            if case .number(let number) = $0, let value = number.intValue { Int64(value) } else { nil }
        }
    }

    /// The number flag `flag` for `context` (an integer variant too), or `defaultValue`
    /// with the reason why not.
    public func double(_ flag: String, default defaultValue: Double, context: JSONObject = [:]) async -> FlagDetails<Double> {
        await evaluate(flag, default: defaultValue, context: context, as: .float) {
            if case .number(let number) = $0 { number.doubleValue } else { nil }
        }
    }

    /// The object (or array) flag `flag` for `context`, or `defaultValue` with the reason why not.
    public func object(_ flag: String, default defaultValue: JSONValue, context: JSONObject = [:]) async -> FlagDetails<JSONValue> {
        await evaluate(flag, default: defaultValue, context: context, as: .object) { $0 }
    }

    /// Evaluates `flag` as `type`, reads its value with `read`, and reports the evaluation.
    private func evaluate<Value: Sendable>(
        _ flag: String, default defaultValue: Value, context: JSONObject, as type: FlagValueType, _ read: (JSONValue) -> Value?
    ) async -> FlagDetails<Value> {
        let details: FlagDetails<Value>
        // The entity a staged deployment of flag sets exposes: the context's targetingKey,
        // else the handle's own, as OFREP on every face takes it.
        let entity: String? = if case .string(let key)? = context["targetingKey"] { key } else { self.entity }
        switch await flagCatalog(for: entity) {
        case .failure(let failure):
            details = FlagDetails(key: flag, default: defaultValue, error: failure.code, message: failure.message)
        case .success(let catalog):
            let answer = Self.evaluator.evaluate(flag, in: catalog, context: context, expecting: type)
            if let json = answer.value, answer.variant != nil {
                if let value = read(json) {
                    details = FlagDetails(key: flag, value: value, variant: answer.variant, reason: answer.reason, errorCode: nil, errorMessage: nil, metadata: answer.metadata)
                } else {
                    // An integer past Int64, say: admitted by flagd's types, not by Swift's.
                    details = FlagDetails(key: flag, default: defaultValue, error: .typeMismatch, message: "flag \"\(flag)\" is out of range for \(Value.self)", metadata: answer.metadata)
                }
            } else {
                details = FlagDetails(
                    key: flag, value: defaultValue, variant: nil, reason: answer.reason, errorCode: answer.errorCode, errorMessage: answer.errorMessage, metadata: answer.metadata
                )
            }
        }
        flagTelemetry.record(flag, variant: details.variant, reason: details.reason, errorCode: details.errorCode)
        return details
    }

    /// Why the flag sets gave no catalog.
    private struct CatalogFailure: Error {
        var code: EvaluationErrorCode
        var message: String
    }

    /// The config's flags as `entity` sees them: the live flag sets, or, while a running
    /// deployment of flag sets exposes the entity, its candidate's (computed here from the
    /// deployment's record and the clock, as every face computes it).
    private func flagCatalog(for entity: String?) async -> Result<FlagCatalog, CatalogFailure> {
        let live = await flagCatalog()
        let now = SystemClock().now().milliseconds
        guard let kept = flagSets, let overlay = try? await deploymentOverlay(), !overlay.isEmpty,
              overlay.showsCandidate(under: ConfigFlags.prefix, entity: entity, at: now)
        else { return live }
        let items = overlay.items(kept.items, under: ConfigFlags.prefix, entity: entity, at: now).filter { ConfigFlags.holdsFlagSet($0.key) }
        if let held = candidateFlagSets, held.items == items {
            return held.catalog.mapError { CatalogFailure(code: .parseError, message: $0.message) }
        }
        let catalog = Self.catalog(items, of: "the candidate flag sets of \(name)")
        candidateFlagSets = (items, catalog)
        return catalog.mapError { CatalogFailure(code: .parseError, message: $0.message) }
    }

    /// The config's flags: from the followed copy while following (parsed once per change
    /// of the flag sets), else read from the server at most once per `maxAge`. A read that
    /// fails is not kept, so the next evaluation asks again.
    private func flagCatalog() async -> Result<FlagCatalog, CatalogFailure> {
        let parseFailure = { (error: DiscfgError) in CatalogFailure(code: .parseError, message: error.message) }
        if let kept = flagSets, liveRevision != nil || ContinuousClock.now - kept.readAt < maxAge {
            return kept.catalog.mapError(parseFailure)
        }
        let items: [Item]
        if liveRevision != nil {
            items = cache.values.compactMap { $0.item.flatMap { ConfigFlags.holdsFlagSet($0.key) ? $0 : nil } }
        } else {
            do {
                items = try await store.items(in: name, under: ConfigFlags.prefix).items
            } catch {
                let reason = (error as? DiscfgError)?.message ?? String(describing: error)
                return .failure(CatalogFailure(code: .general, message: "the flag sets of \(name) could not be read: \(reason)"))
            }
        }
        let sorted = items.sorted { $0.key.path < $1.key.path }
        let catalog = Self.catalog(sorted, of: "the flag sets of \(name)")
        flagSets = (catalog, sorted, .now)
        return catalog.mapError(parseFailure)
    }

    /// One catalog of flag sets `items` (in key order), or why they are not one.
    private static func catalog(_ items: [Item], of what: String) -> Result<FlagCatalog, DiscfgError> {
        do {
            return .success(try ConfigFlags.catalog(items))
        } catch {
            return .failure(error as? DiscfgError ?? DiscfgError.invalid("value", "\(what) do not parse"))
        }
    }
}
