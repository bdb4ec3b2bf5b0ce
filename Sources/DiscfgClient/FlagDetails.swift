import DiscfgFlags
import DiscfgJSON

/// What a typed flag read answered, and why: OpenFeature's evaluation details.
///
/// `value` is always usable: the flag's variant when the evaluation named one, else the
/// caller's default (a DISABLED flag, a flag with no default variant, or any error).
///
/// ```swift
/// let details = await cfg.bool("new-checkout", default: false, context: ["targetingKey": "u1"])
/// details.value      // true
/// details.variant    // "on"
/// details.reason     // .targetingMatch
/// ```
public struct FlagDetails<Value: Sendable>: Sendable {
    /// The flag's key.
    public let key: String
    /// The variant's value, or the caller's default.
    public let value: Value
    /// The variant answered; nil when `value` is the caller's default.
    public let variant: String?
    /// Why (`ERROR` on any failure).
    public let reason: EvaluationReason
    /// What failed, when ``reason`` is `ERROR`.
    public let errorCode: EvaluationErrorCode?
    /// What failed, for a person.
    public let errorMessage: String?
    /// The flag set's metadata with the flag's own merged over it.
    public let metadata: JSONObject

    init(key: String, value: Value, variant: String?, reason: EvaluationReason, errorCode: EvaluationErrorCode?, errorMessage: String?, metadata: JSONObject) {
        self.key = key
        self.value = value
        self.variant = variant
        self.reason = reason
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.metadata = metadata
    }

    /// The caller's default, failed with `code`.
    init(key: String, default value: Value, error code: EvaluationErrorCode, message: String, metadata: JSONObject = JSONObject()) {
        self.init(key: key, value: value, variant: nil, reason: .error, errorCode: code, errorMessage: message, metadata: metadata)
    }
}

extension FlagDetails: Equatable where Value: Equatable {}
