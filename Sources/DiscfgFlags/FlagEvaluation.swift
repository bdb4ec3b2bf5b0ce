import DiscfgJSON

/// Why an evaluation answered what it did, as OpenFeature and flagd name reasons.
public enum EvaluationReason: String, Sendable {
    /// The flag has no targeting: its default variant.
    case staticValue = "STATIC"
    /// Targeting gave null, or the flag has no default variant (then the caller's default).
    case defaultValue = "DEFAULT"
    /// Targeting named a variant.
    case targetingMatch = "TARGETING_MATCH"
    /// The flag is DISABLED: the caller's default, not an error.
    case disabled = "DISABLED"
    /// The evaluation failed; see ``FlagEvaluation/errorCode``.
    case error = "ERROR"
}

/// Why an evaluation failed, as OpenFeature (and OFREP) name error codes.
public enum EvaluationErrorCode: String, Sendable {
    /// No flag with that key.
    case flagNotFound = "FLAG_NOT_FOUND"
    /// The flag's targeting is not a rule flagd can run (not an object, unknown operator).
    case parseError = "PARSE_ERROR"
    /// The variant's value is not of the type the caller asked for.
    case typeMismatch = "TYPE_MISMATCH"
    /// Targeting named no variant of the flag, or failed while running.
    case general = "GENERAL"
    /// Kept for OFREP: flagd's evaluation itself never requires a targeting key.
    case targetingKeyMissing = "TARGETING_KEY_MISSING"
    /// The evaluation context is not usable (a `targetingKey` that is not a string).
    case invalidContext = "INVALID_CONTEXT"
}

/// The type a caller expects of a flag's value (OpenFeature's typed resolvers).
public enum FlagValueType: String, Sendable, CaseIterable {
    /// `true` or `false`.
    case boolean
    /// A string.
    case string
    /// A number written without fraction or exponent.
    case integer
    /// Any number.
    case float
    /// An object or an array.
    case object

    /// Whether `value` is of this type, as flagd checks it: an integer is a float too, but a
    /// boolean is not (flagd's Python reference lets `true` pass as 1.0, a Python accident).
    public func admits(_ value: JSONValue) -> Bool {
        switch (self, LogicValue(value)) {
        case (.boolean, .bool), (.string, .string), (.integer, .int), (.float, .int), (.float, .float),
            (.object, .object), (.object, .array):
            true
        default: false
        }
    }
}

/// The answer to one flag evaluation.
///
/// `value` and `variant` are nil when the answer is the caller's own default (a DISABLED
/// flag, no default variant, or an error), as OFREP leaves them out then.
public struct FlagEvaluation: Sendable, Equatable {
    /// The flag's key.
    public let key: String
    /// The variant's value exactly as the flag set spells it (`10.0` stays `10.0`); nil for the caller's default.
    public let value: JSONValue?
    /// The variant answered; nil for the caller's default.
    public let variant: String?
    /// Why.
    public let reason: EvaluationReason
    /// Set when ``reason`` is ``EvaluationReason/error``.
    public let errorCode: EvaluationErrorCode?
    /// What went wrong, for a person (never the caller's data).
    public let errorMessage: String?
    /// Flag-set metadata with the flag's own merged over it.
    public let metadata: JSONObject

    /// An answer.
    public init(key: String, value: JSONValue?, variant: String?, reason: EvaluationReason, metadata: JSONObject) {
        self.key = key
        self.value = value
        self.variant = variant
        self.reason = reason
        self.errorCode = nil
        self.errorMessage = nil
        self.metadata = metadata
    }

    /// A failure: no value, no variant, reason ERROR.
    public init(key: String, error: EvaluationErrorCode, message: String, metadata: JSONObject = JSONObject()) {
        self.key = key
        self.value = nil
        self.variant = nil
        self.reason = .error
        self.errorCode = error
        self.errorMessage = message
        self.metadata = metadata
    }
}
