/// flagd's `fractional` operator: deterministic weighted bucketing.
///
/// `{"fractional": [bucketBy?, [variant, weight?], …]}`: the bucketing value (by default
/// built from `$flagd.flagKey` and `targetingKey`) is hashed with MurmurHash3 x86 32 (seed 0);
/// `bucket = (hash × Σweights) >> 32`, and the answer is the first variant whose running sum of
/// weights exceeds the bucket. Weights default to 1, must be integers, and negative weights
/// count as 0. Bad arguments give null, never an error.
enum Fractional {
    /// The largest sum of weights flagd accepts (Int32.max).
    static let maxWeightSum = 2_147_483_647

    static func evaluate(_ args: [LogicValue], data: LogicValue, generation: FractionalGeneration) -> LogicValue {
        guard !args.isEmpty else { return .null }
        guard let (hash, distribution) = hashed(args, data: data, generation: generation) else { return .null }
        var weights: [(variant: LogicValue, weight: Int)] = []
        var total = 0
        for entry in distribution {
            guard let parsed = fraction(entry) else { return .null }
            weights.append(parsed)
            total += parsed.weight
            if total > maxWeightSum { return .null }
        }
        guard total > 0 else { return .null }
        let bucket = Int((UInt64(hash) * UInt64(total)) >> 32)
        var end = 0
        for (variant, weight) in weights {
            end += weight
            if bucket < end { return variant }
        }
        return .null
    }

    /// The hash of the bucketing value and the distribution entries after it; nil when there
    /// is no usable bucketing value.
    private static func hashed(_ args: [LogicValue], data: LogicValue, generation: FractionalGeneration) -> (UInt32, ArraySlice<LogicValue>)? {
        let flagKey: String = if case .string(let key)? = data["$flagd"]?["flagKey"] { key } else { "" }
        let targetingKey: String? = if case .string(let key)? = data["targetingKey"], !key.isEmpty { key } else { nil }
        switch generation {
        case .canonicalCBOR:
            if case .array = args[0] {
                guard let targetingKey else { return nil }
                let value = LogicValue.array([.string(flagKey), .string(targetingKey)])
                return (MurmurHash3.x86_32(CanonicalCBOR.encode(value)), args[...])
            }
            if args[0].isNull { return nil }
            return (MurmurHash3.x86_32(CanonicalCBOR.encode(args[0])), args.dropFirst())
        case .utf8Concatenation:
            if case .string(let custom) = args[0] {
                guard !custom.isEmpty else { return nil }
                return (MurmurHash3.x86_32(Array(custom.utf8)), args.dropFirst())
            }
            guard let targetingKey else { return nil }
            return (MurmurHash3.x86_32(Array((flagKey + targetingKey).utf8)), args[...])
        }
    }

    /// `[variant]` or `[variant, integer weight]`.
    private static func fraction(_ entry: LogicValue) -> (variant: LogicValue, weight: Int)? {
        guard case .array(let parts) = entry, (1...2).contains(parts.count) else { return nil }
        guard parts.count == 2 else { return (parts[0], 1) }
        guard case .int(let weight) = parts[1] else { return nil }
        return (parts[0], max(0, weight))
    }
}
