import ArgumentParser
import DiscfgCore
import DiscfgSecrets
import DiscfgWire
import Foundation

/// `--dry-run` and `--if-revision`, on the commands that change many keys at once: see
/// the change before it is made, then make exactly that change.
struct PlanOptions: ParsableArguments {
    @Flag(name: .customLong("dry-run"), help: "Print the plan (each key it would set or delete, the revision it is based on) and change nothing.")
    var dryRun = false

    @Option(
        name: .customLong("if-revision"),
        help: ArgumentHelp("Apply only if the config is still at this revision, as a reviewed plan was (nothing changes otherwise).", valueName: "n"),
        transform: { Revision(UInt64(try NumberField.revision("--if-revision").parse($0))) }
    )
    var ifRevision: Revision?

    /// Runs an import with these options, then prints the plan of a dry run, or `done`'s
    /// line for a change made. `what` says what the plan is of; `apply` is the command
    /// line that applies it. `read` is the revision the snapshot was worked out from,
    /// when it depends on the config as it was (a document's keys): the change applies
    /// only there, and --if-revision must name it.
    ///
    /// A snapshot holding secrets is planned first, whatever the flags: a sealed value
    /// opens only for the item it was sealed for (its config, key, create revision and
    /// version), so each secret the change writes is opened where it came from
    /// (`sealedFrom`: a config at a revision) and sealed again for the item the plan says
    /// it becomes; the change then applies at the planned revision only, so those items
    /// are what it makes. Without a source to open them from, a change that writes a
    /// secret is refused, naming it, before anything is written.
    func run(
        _ snapshot: ConfigSnapshot, into config: ConfigName, _ options: ImportOptions, store: any ConfigStore, output: Output,
        sealedFrom source: (config: ConfigName, revision: Revision, global: GlobalOptions)? = nil, read: Revision? = nil,
        what: String, apply: String, action: String, done: @escaping @Sendable (ImportResult) -> String
    ) async throws {
        var options = options
        var snapshot = snapshot
        options.ifRevision = ifRevision
        if let read {
            try options.checkRevision(read, of: config)
            options.ifRevision = read
        }
        if snapshot.items.contains(where: { $0.contentType == SecretMarker.contentType }) {
            var planned = options
            planned.dryRun = true
            let base = try await planned.bindDryRun(store, config)
            let plan = try await store.importSnapshot(snapshot, into: config, options: planned)
            if let source {
                snapshot = try await Self.resealed(snapshot, as: plan, into: config, store: store, output: output, from: source)
            } else {
                try Self.refuseSealedWrites(plan, config: config)
            }
            options.ifRevision = base
        }
        options.dryRun = dryRun
        let base = try await options.bindDryRun(store, config)
        let result = try await store.importSnapshot(snapshot, into: config, options: options)
        if dryRun, let base {
            let plan = ChangePlan(result: result, base: base, config: config)
            output.emit(plan.envelope) { plan.text(what, apply: apply) }
        } else {
            output.emit(Envelope(action: action, config: config, changes: result)) { done(result) }
        }
    }

    /// `snapshot` with each secret that `plan` writes opened from `source` and sealed
    /// again for the item the plan makes of it in `config`.
    static func resealed(
        _ snapshot: ConfigSnapshot, as plan: ImportResult, into config: ConfigName, store: any ConfigStore, output: Output,
        from source: (config: ConfigName, revision: Revision, global: GlobalOptions)
    ) async throws -> ConfigSnapshot {
        let written = Dictionary(plan.events.compactMap { event in
            event.item.flatMap { $0.contentType == SecretMarker.contentType ? (event.key, $0) : nil }
        }) { first, _ in first }
        guard !written.isEmpty else { return snapshot }
        guard let encryption = try await store.configInfo(config).settings.encryption else {
            throw DiscfgError.invalid(
                "secret",
                "config \"\(config)\" has no encryption key, so the secrets this change writes cannot be sealed for it: give it one with discfg update \(config) --encryption …; nothing changed"
            )
        }
        let reader = try source.global.secretReader(store, source.config, output: output)
        let opened = try await reader.revealed(snapshot.items.filter { written[$0.key] != nil }, at: source.revision)
        let plain = Dictionary(opened.map { ($0.key, $0) }) { first, _ in first }
        let keyring = try source.global.keyring()
        var resealed = snapshot
        for index in resealed.items.indices {
            guard let item = written[resealed.items[index].key], let open = plain[item.key] else { continue }
            let binding = SecretBinding(config: config, key: item.key, createRevision: item.createRevision, version: item.version)
            resealed.items[index].value = try await keyring.seal(open.value, contentType: open.contentType, binding: binding, encryption: encryption)
        }
        return resealed
    }

    /// Refuses a change that writes a sealed value: it would not open as the item it
    /// becomes.
    static func refuseSealedWrites(_ plan: ImportResult, config: ConfigName) throws {
        let sealed = plan.events.filter { $0.kind == .put && $0.item?.contentType == SecretMarker.contentType }.map(\.key)
        guard let first = sealed.first else { return }
        let named = sealed.count == 1 ? "the secret \(first)" : "\(sealed.count) secrets (\(first), …)"
        throw DiscfgError.invalid(
            "secret",
            "this change would write \(named) of config \"\(config)\" as sealed bytes, which open only for the item they were sealed for; set \(sealed.count == 1 ? "it" : "them") with 'discfg set --secret', or leave \(sealed.count == 1 ? "it" : "them") out (--prefix); nothing changed"
        )
    }
}

/// A change worked out and not made (`--dry-run`): what each key would become, the
/// revision it is based on, and the command line that applies exactly it.
struct ChangePlan {
    /// What the dry run answered.
    let result: ImportResult
    /// The revision the plan was worked out at: the change applies only there.
    let base: Revision
    let config: ConfigName

    /// The plan as a person reads it: one line per key (`+` added, `~` changed, `-`
    /// deleted), then how to apply it. `apply` is the command line without
    /// `--if-revision`.
    func text(_ what: String, apply: String) -> String {
        var lines = ["plan: \(what) at revision \(base) of \(config)"]
        if result.events.isEmpty {
            lines.append("  no change (\(result.unchanged) unchanged)")
            return lines.joined(separator: "\n")
        }
        for event in result.events.sorted(by: { $0.key < $1.key }) {
            switch (event.kind, event.prevItem) {
            case (.put, nil): lines.append("  + \(event.key)")
            case (.put, _): lines.append("  ~ \(event.key)")
            default: lines.append("  - \(event.key)")
            }
        }
        let deleted = result.events.filter { $0.kind != .put }.count
        lines.append("\(result.events.count - deleted) to set, \(deleted) to delete, \(result.unchanged) unchanged: one change, revision \(base.next)")
        lines.append("apply exactly this with: \(apply) --if-revision \(base)")
        return lines.joined(separator: "\n")
    }

    /// What a change made, as the commands' last line says it: `2 set, 1 deleted, 4
    /// unchanged (revision 58)`.
    static func tally(_ result: ImportResult) -> String {
        let deleted = result.events.filter { $0.kind != .put }.count
        return "\(result.events.count - deleted) set, \(deleted) deleted, \(result.unchanged) unchanged (revision \(result.revision))"
    }

    /// The plan as JSON: the envelope a change would answer, with action `plan`.
    var envelope: Envelope { Envelope(action: "plan", config: config, changes: result) }
}

extension ImportOptions {
    /// A dry run is bound to the revision it reads first, so the plan it prints is of one
    /// state of the config; returns that revision (or the one `--if-revision` named).
    mutating func bindDryRun(_ store: any ConfigStore, _ config: ConfigName) async throws -> Revision? {
        guard dryRun else { return ifRevision }
        if ifRevision == nil { ifRevision = try await store.configInfo(config).revision }
        return ifRevision
    }
}
