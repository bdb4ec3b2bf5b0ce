/// How flagd's `fractional` turns the bucketing value into a hash: flagd's two generations.
///
/// - ``canonicalCBOR`` (current; openfeature-flagd-core 2.0.0 and flagd's ADR
///   "fractional-non-string-rand-units"): MurmurHash3 of the deterministic CBOR of the
///   bucketing value. The default value is the array `[flagKey, targetingKey]`; a custom
///   bucketing expression may give any value but an array or null (a string, number, boolean
///   or object), and null gives null.
/// - ``utf8Concatenation`` (previous; openfeature-flagd-core 1.0.0 and flagd up to at least
///   v0.16.1): MurmurHash3 of the UTF-8 of `flagKey + targetingKey`; a custom bucketing
///   expression must give a non-empty string, which is hashed as UTF-8.
///
/// A flag set opts into the previous generation with its metadata member
/// `"fractionalGeneration": "utf8"` (see ``FlagSet/fractionalGenerationKey``), which flagd's
/// schema accepts (flag-set metadata is free-form), so a fleet mixing discfg with an older
/// flagd keeps every user in the bucket it had.
public enum FractionalGeneration: String, Sendable, CaseIterable {
    /// The current generation: CBOR of the bucketing value.
    case canonicalCBOR = "cbor"
    /// The previous generation: UTF-8 of `flagKey + targetingKey`.
    case utf8Concatenation = "utf8"
}
