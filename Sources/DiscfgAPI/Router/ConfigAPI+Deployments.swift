import DiscfgCore
import DiscfgWire
import Foundation
import Hummingbird

/// A config's staged deployments: listed, read, started and moved through their states.
/// The rules are the store's (``ChangeTransaction/changeDeployment(_:)``); these routes read
/// the request into a ``DeploymentChange`` and answer the record as a
/// ``DeploymentDocument`` at the server's clock. Each route is one operation of the whole
/// config (``DiscfgService/Action/Kind/deploymentRead``, `deploymentChange`), performed
/// around the handler by ``ConfigAPI/respond(_:_:_:deadline:)``.
extension ConfigAPI {
    /// `GET deployments`: every deployment of the config, running first, each at the
    /// server's clock.
    func listDeployments(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let listing = try await store.deployments(in: config)
        let now = options.clock.now().milliseconds
        var envelope = Envelope(action: Endpoint.listDeployments.action)
        envelope.config = config.rawValue
        envelope.revision = listing.revision
        envelope.deployments = await health(of: listing.running.map { DeploymentDocument($0, running: true, at: now) }, in: config)
            + listing.ended.map { DeploymentDocument($0, running: false, at: now) }
        return APIResponse.json(envelope)
    }

    /// `GET deployments/{id}`: one deployment, running or ended.
    func getDeployment(_ request: Request, _ context: some DiscfgRequestContext) async throws -> Response {
        let config = try request.configName(context)
        let id = try Self.deploymentID(context)
        let found = try await store.deployment(id, in: config)
        var envelope = Envelope(action: Endpoint.getDeployment.action)
        envelope.config = config.rawValue
        envelope.deployment = await health(of: [DeploymentDocument(found.deployment, running: found.running, at: options.clock.now().milliseconds)], in: config).first
        return APIResponse.json(envelope)
    }

    /// `POST deployments?prefix=&replace=&strategy=|growth=&step=&interval=&bake=&rollback=&signal=…&id=`:
    /// stages the body, a snapshot as `POST import` takes it, as the candidate of a new
    /// deployment of `prefix`. Every parameter is read before the body, so a bad one is
    /// named and nothing is read or written.
    func startDeployment(_ request: inout Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let format = try Self.snapshotFormat(of: request)
        var prefix = KeyPrefix.root
        if let text = request.query("prefix") {
            do {
                prefix = try KeyPrefix(text)
            } catch var error as DiscfgError {
                error.field = "prefix"
                throw error
            }
        }
        let replace = try request.flag("replace")
        let strategy = try Self.inQueryWords { try Self.deploymentStrategy(request) }
        let signals = try Self.inQueryWords { try request.uri.queryParameters.getAll("signal").map { try DeploymentSignal(String($0)) } }
        let id = try request.query("id").map { id in
            try DeploymentAction.checkID(id)
            return id
        } ?? Deployment.randomID()
        let snapshot = try format.decode(try await request.bodyData(limit: options.maxImportBytes))
        let plan = DeploymentPlan(
            id: id, prefix: prefix, entries: snapshot.items, replace: replace, strategy: strategy, signals: signals,
            message: perform.message ?? snapshot.message ?? ""
        )
        let outcome = try await Attribution.documented(snapshot.message) {
            try await RequestDeadlines.commit { try await store.changeDeployment(.start(plan), in: config) }
        }
        return deploymentChanged(outcome, by: .startDeployment, in: config, status: .created)
    }

    /// `POST deployments/{id}/{action}?after=N`: records a pause, a resume, a rollback, or
    /// what the clock has made true (complete, rolled-back), or a revert; the reason is the
    /// request's `Discfg-Message`. With `after`, only while the record has exactly N
    /// transitions (412 otherwise, nothing written).
    func changeDeployment(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let id = try Self.deploymentID(context)
        let action = try DeploymentAction(parsing: context.parameters.get("action").map { String($0) } ?? "")
        let after = try request.number(Self.afterField).map { Int($0) }
        let change = DeploymentChange.transition(id: id, action.transition, reason: perform.message ?? "", after: after)
        let outcome = try await RequestDeadlines.commit { try await store.changeDeployment(change, in: config) }
        return deploymentChanged(outcome, by: .changeDeployment, in: config, status: .ok)
    }

    /// The `after` parameter: how many transitions the caller read.
    static let afterField = NumberField("after", 0...Int64(Int32.max))

    /// The answer to a deployment's change: its document, and the change's revision,
    /// time, events and attribution, as other changes answer them.
    private func deploymentChanged(_ outcome: DeploymentOutcome, by endpoint: Endpoint, in config: ConfigName, status: HTTPResponse.Status) -> Response {
        let record = DeploymentKeys.runningRecord(outcome.deployment.id)
        let running = outcome.events.contains { $0.key == record && $0.kind == .put }
        var envelope = Envelope(action: endpoint.action)
        envelope.config = config.rawValue
        envelope.deployment = DeploymentDocument(outcome.deployment, running: running, at: options.clock.now().milliseconds)
        envelope.events = outcome.events.map(EventDocument.init)
        envelope.revision = outcome.revision
        envelope.at = outcome.events.first?.at
        let attribution = outcome.events.first?.attribution
        envelope.by = attribution?.principal
        envelope.message = attribution?.message
        return APIResponse.json(envelope, status: status)
    }

    /// The `{id}` path parameter, checked.
    static func deploymentID(_ context: some DiscfgRequestContext) throws -> String {
        let id = context.parameters.get("id").map { String($0) } ?? ""
        try DeploymentAction.checkID(id)
        return id
    }

    /// The strategy a start's query names: `strategy` (a predefined one), or `growth` with
    /// `step`, `interval` and `bake`; `rollback` with either.
    static func deploymentStrategy(_ request: Request) throws -> DeploymentStrategy {
        let rollback = try request.query("rollback").map {
            try DeploymentDuration.seconds($0, field: "rollback", upTo: DeploymentStrategy.maxRollbackSeconds)
        } ?? 0
        if let name = request.query("strategy") {
            if let extra = ["growth", "step", "interval", "bake"].first(where: { request.query($0) != nil }) {
                throw DiscfgError.invalid(
                    extra, "a predefined strategy fixes the growth, step, interval and bake; leave out \(extra), or give growth, step and interval instead of strategy"
                )
            }
            return try DeploymentStrategy.predefined(named: name).withRollbackSeconds(rollback)
        }
        guard let growthText = request.query("growth") else {
            throw DiscfgError.invalid(
                "strategy", "say how the deployment grows: strategy=NAME (such as Linear20PercentEvery6Minutes), or growth=linear or exponential with step and interval"
            )
        }
        guard let growth = DeploymentStrategy.Growth(rawValue: growthText) else {
            throw DiscfgError.invalid("growth", "growth is linear or exponential, not \"\(String(growthText.prefix(40)).debugEscaped)\"")
        }
        guard let stepText = request.query("step") else {
            throw DiscfgError.invalid("step", "growth=\(growth.rawValue) needs step, the first step's share in percent, such as 20 or 12.5")
        }
        let step = try DeploymentStrategy.stepBasisPoints(percent: stepText)
        let interval = try request.query("interval").map { try DeploymentDuration.seconds($0, field: "interval", upTo: DeploymentStrategy.maxIntervalSeconds) } ?? 0
        let bake = try request.query("bake").map { try DeploymentDuration.seconds($0, field: "bake", upTo: DeploymentStrategy.maxBakeSeconds) } ?? 0
        return try DeploymentStrategy(growth: growth, stepBasisPoints: step, intervalSeconds: interval, bakeSeconds: bake, rollbackSeconds: rollback)
    }

    /// The CLI's flags the core's refusals name, and the query parameters that carry them here.
    static let deploymentParameters = [
        ("--rollback-over", "rollback"), ("--rollback-on", "signal"), ("--strategy", "strategy"), ("--interval", "interval"), ("--step", "step"),
        ("--bake", "bake"),
    ]

    /// Runs `parse`, its refusal naming this API's query parameters where the core's name
    /// `deploy start`'s flags: the core's sentences are written for the CLI.
    static func inQueryWords<T>(_ parse: () throws -> T) throws -> T {
        do {
            return try parse()
        } catch var error as DiscfgError {
            for (flag, parameter) in deploymentParameters {
                error.message = error.message.replacingOccurrences(of: flag, with: parameter)
                if error.field == flag { error.field = parameter }
            }
            throw error
        }
    }
}
