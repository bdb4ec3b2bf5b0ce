extension DeploymentStrategy {
    /// The strategies AWS AppConfig predefines, under AppConfig's names, so a deployment
    /// moved from AppConfig keeps its schedule:
    /// - `AllAtOnce`: everyone at once, bake 10 minutes;
    /// - `Linear50PercentEvery30Seconds`: 50 % every 30 seconds, bake 1 minute;
    /// - `Linear20PercentEvery6Minutes`: 20 % every 6 minutes (30 minutes), bake 30 minutes;
    /// - `Canary10Percent20Minutes`: exponential from 10 % every 4 minutes — 10, 20, 40,
    ///   80, 100 % over 20 minutes — bake 10 minutes.
    public static let predefined: [DeploymentStrategy] = [
        make("AllAtOnce", .linear, 10_000, interval: 0, bake: 600),
        make("Linear50PercentEvery30Seconds", .linear, 5_000, interval: 30, bake: 60),
        make("Linear20PercentEvery6Minutes", .linear, 2_000, interval: 360, bake: 1_800),
        make("Canary10Percent20Minutes", .exponential, 1_000, interval: 240, bake: 600),
    ]

    /// The predefined strategy called `name`, with or without AppConfig's `AppConfig.`
    /// prefix, in any case: `Linear20PercentEvery6Minutes`, `AppConfig.AllAtOnce`, `allatonce`.
    /// - Throws: `invalidArgument` (`--strategy`) naming the predefined strategies.
    public static func predefined(named name: String) throws -> DeploymentStrategy {
        var bare = Substring(name)
        if bare.lowercased().hasPrefix("appconfig.") { bare = bare.dropFirst("appconfig.".count) }
        let wanted = bare.lowercased()
        guard let strategy = predefined.first(where: { $0.name?.lowercased() == wanted }) else {
            let names = predefined.compactMap(\.name).joined(separator: ", ")
            throw DiscfgError.invalid(
                "--strategy",
                "\"\(String(name.prefix(60)).debugEscaped)\" is not a strategy; use linear or exponential with --step and --interval, or one of \(names)"
            )
        }
        return strategy
    }

    private static func make(_ name: String, _ growth: Growth, _ step: Int, interval: Int64, bake: Int64) -> DeploymentStrategy {
        // The table above is within every bound; a failure here is a mistake in it.
        do {
            return try DeploymentStrategy(growth: growth, stepBasisPoints: step, intervalSeconds: interval, bakeSeconds: bake, rollbackSeconds: 0, name: name)
        } catch {
            preconditionFailure("predefined strategy \(name): \(error)")
        }
    }
}

extension DeploymentStrategy: Codable {
    private enum Field: String, CodingKey, CaseIterable {
        case growth, stepBasisPoints, intervalSeconds, bakeSeconds, rollbackSeconds, name
    }

    /// Reads a strategy as ``encode(to:)`` writes it, refusing unknown fields, numbers
    /// out of range and a predefined name whose schedule differs from its parameters.
    public init(from decoder: any Decoder) throws {
        let fields = try decoder.strictFields(Field.self, of: "a deployment strategy", at: "strategy")
        let growth = try fields.required(Growth.self, .growth, at: "strategy")
        let step = try fields.required(Int.self, .stepBasisPoints, at: "strategy")
        let interval = try fields.required(Int64.self, .intervalSeconds, at: "strategy")
        let bake = try fields.required(Int64.self, .bakeSeconds, at: "strategy")
        let rollback = try fields.optional(Int64.self, .rollbackSeconds, at: "strategy") ?? 0
        let name = try fields.optional(String.self, .name, at: "strategy")
        do {
            try self.init(growth: growth, stepBasisPoints: step, intervalSeconds: interval, bakeSeconds: bake, rollbackSeconds: rollback, name: name)
        } catch var error as DiscfgError {
            error.field = "strategy"
            throw error
        }
        if let name {
            let named = try? Self.predefined(named: name)
            guard let named, named.name == name, named.growth == growth, named.stepBasisPoints == step,
                named.intervalSeconds == interval, named.bakeSeconds == bake
            else {
                throw DiscfgError.invalid("strategy.name", "the strategy is named \"\(name.debugEscaped)\" but that is not the predefined strategy with its growth, step, interval and bake")
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        try fields.encode(growth, forKey: .growth)
        try fields.encode(stepBasisPoints, forKey: .stepBasisPoints)
        try fields.encode(intervalSeconds, forKey: .intervalSeconds)
        try fields.encode(bakeSeconds, forKey: .bakeSeconds)
        try fields.encode(rollbackSeconds, forKey: .rollbackSeconds)
        try fields.encodeIfPresent(name, forKey: .name)
    }
}
