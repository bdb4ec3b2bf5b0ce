import DiscfgCore
import Foundation

/// Flag sets under `/flags/`: every write there must leave a flagd flag set (schema v0) at
/// its key, and the config's sets must share no flag key; a refused change writes nothing,
/// whichever way it came (set, patch, transaction, import, document).
public struct FlagSetChecks: Sendable {
    let conformance: StoreConformance

    /// A flag set defining `keys`, each a boolean flag that is off unless targeted.
    static func flagSet(_ keys: String...) -> String {
        let flags = keys.map { #""\#($0)": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}"# }
        return #"{"flags": {\#(flags.joined(separator: ", "))}}"#
    }

    /// Flag sets flagd refuses, each with the JSON Pointer its refusal names.
    public static let aFlagSetFlagdRefusesIsRefusedArguments: [String] = [
        "state", "ref", "defaultVariant", "variantTypes", "notJSON",
    ]

    static func refused(_ name: String) -> (text: String, pointer: String) {
        switch name {
        case "state":
            (#"{"flags": {"new-ui": {"state": "ON", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}"#, "/flags/new-ui/state")
        case "ref":
            (#"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off", "targeting": {"$ref": "beta"}}}}"#, "/flags/new-ui/targeting")
        case "defaultVariant":
            (#"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "maybe"}}}"#, "/flags/new-ui/defaultVariant")
        case "variantTypes":
            (#"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true, "off": "no"}, "defaultVariant": "off"}}}"#, "/flags/new-ui/variants")
        default:
            (#"{"flags": {"new-ui": "#, "(root)")
        }
    }

    public func aFlagSetFlagdRefusesIsRefused(flagSet: String) async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let web = try Key("/flags/web")
            try await store.set("/flags/web", Self.flagSet("new-ui"), in: config)
            let before = try await store.observableState(of: config)
            let (text, pointer) = Self.refused(flagSet)
            let phrases = ["/flags/web", pointer]
            try await expectError(.invalidArgument, "set", mentioning: phrases) { try await store.set("/flags/web", text, in: config) }
            try await expectError(.invalidArgument, "typed set", mentioning: phrases) {
                try await store.set("/flags/web", text, in: config, options: SetOptions(contentType: "application/json"))
            }
            try await expectError(.invalidArgument, "transaction", mentioning: phrases) {
                try await store.transact(Transaction(success: [.put(Key("/free"), Data(text: "1")), .put(web, Data(text: text))]), in: config)
            }
            try await expectError(.invalidArgument, "import", mentioning: phrases) {
                try await store.importSnapshot(ConfigSnapshot(items: [.init(key: Key("/free"), value: Data(text: "1")), .init(key: web, value: Data(text: text))]), into: config, replace: false)
            }
            if flagSet != "notJSON" {
                try await expectError(.invalidArgument, "merge patch", mentioning: phrases) {
                    try await store.patch(web, ValuePatch.merge(json(text)), in: config, conditions: [])
                }
                try await expectError(.invalidArgument, "document", mentioning: phrases) {
                    try await store.putDocument(json(#"{"web": \#(text)}"#), under: KeyPrefix("/flags/"), in: config, replace: false)
                }
            }
            try await expectEqual(store.observableState(of: config), before)
        }
    }

    public func aJSONPatchThatBreaksAFlagSetIsRefused() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let web = try Key("/flags/web")
            try await store.set("/flags/web", Self.flagSet("new-ui"), in: config)
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, "JSON patch", mentioning: ["/flags/web", "/flags/new-ui/state"]) {
                try await store.patch(web, ValuePatch(jsonPatch: json(#"[{"op": "replace", "path": "/flags/new-ui/state", "value": "OFF"}]"#)), in: config, conditions: [])
            }
            try await expectEqual(store.observableState(of: config), before)
            // The kill switch, as a JSON patch: a valid flag set is written.
            let off = try await store.patch(web, ValuePatch(jsonPatch: json(#"[{"op": "replace", "path": "/flags/new-ui/state", "value": "DISABLED"}]"#)), in: config, conditions: [])
            expectEqual(off.revision, 2)
            let (catalog, _) = try await store.flags(in: config)
            expectEqual(catalog.entries["new-ui"]?.flag.state, .disabled)
        }
    }

    public func flagSetsShareNoFlagKey() async throws {
        try await conformance.withStore { store, _ in
            let config = try await store.makeConfig()
            let web = try Key("/flags/web"), billing = try Key("/flags/billing")
            try await store.set("/flags/web", Self.flagSet("new-ui", "dark-mode"), in: config) // 1
            let before = try await store.observableState(of: config)
            try await expectError(.invalidArgument, "set", mentioning: ["/flags/billing", "/flags/web", "\"new-ui\"", "/flags/new-ui"]) {
                try await store.set("/flags/billing", Self.flagSet("invoices", "new-ui"), in: config)
            }
            try await expectError(.invalidArgument, "two sets in one transaction", mentioning: ["/flags/billing", "/flags/team/a", "\"invoices\""]) {
                try await store.transact(Transaction(success: [
                    .put(billing, Data(text: Self.flagSet("invoices"))), .put(Key("/flags/team/a"), Data(text: Self.flagSet("invoices"))),
                ]), in: config)
            }
            try await expectError(.invalidArgument, "import", mentioning: ["/flags/billing", "/flags/web"]) {
                try await store.importSnapshot(ConfigSnapshot(items: [.init(key: billing, value: Data(text: Self.flagSet("dark-mode")))]), into: config, replace: false)
            }
            try await expectEqual(store.observableState(of: config), before)
            // A flag moved from one set to another in one change leaves a union: allowed.
            let moved = try await store.transact(Transaction(success: [
                .put(web, Data(text: Self.flagSet("dark-mode"))), .put(billing, Data(text: Self.flagSet("invoices", "new-ui"))),
            ]), in: config)
            expectEqual(moved.revision, 2)
            let (catalog, revision) = try await store.flags(in: config)
            expectEqual(revision, 2)
            expectEqual(catalog.entries["new-ui"]?.setName, "/flags/billing")
            expectEqual(catalog.entries["dark-mode"]?.setName, "/flags/web")
            // Deleting a set is always allowed, and frees its keys for another.
            try await expectEqual(store.delete(billing, in: config, conditions: []).revision, 3)
            try await expectEqual(store.set("/flags/web", Self.flagSet("dark-mode", "new-ui", "invoices"), in: config).revision, 4)
            // Keys outside /flags/ hold what they like.
            try await expectEqual(store.set("/app/flags", "not a flag set", in: config).revision, 5)
        }
    }

    public func aFlagSetThatExpiredNoLongerClaimsItsKeys() async throws {
        try await conformance.withStore { store, clock in
            let config = try await store.makeConfig()
            try await store.set("/flags/trial", Self.flagSet("new-ui"), in: config, options: SetOptions(ttlSeconds: 60))
            try await expectError(.invalidArgument, "while the trial set lives", mentioning: ["/flags/web", "/flags/trial"]) {
                try await store.set("/flags/web", Self.flagSet("new-ui"), in: config)
            }
            clock.advance(seconds: 61)
            // The expiry and the write are one change's events: the expired set names nothing.
            let event = try await store.set("/flags/web", Self.flagSet("new-ui"), in: config)
            let (catalog, _) = try await store.flags(in: config)
            expectEqual(catalog.entries["new-ui"]?.setName, "/flags/web")
            expectEqual(event.key, try Key("/flags/web"))
        }
    }
}

extension StoreConformance {
    /// The flag set checks.
    public var flagSets: FlagSetChecks { FlagSetChecks(conformance: self) }
}
