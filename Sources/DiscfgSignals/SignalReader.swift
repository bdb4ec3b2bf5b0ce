import DiscfgAWS
import DiscfgCore
import Foundation

/// Reads the signals a deployment watches (`--rollback-on`) into ``SignalReading``s: the
/// one call the monitor makes, in `serve` and in the Lambda function alike.
///
/// AppConfig's rule for alarms: `OK` is healthy; `ALARM` and `INSUFFICIENT_DATA` are
/// unhealthy, and so is an alarm CloudWatch does not have, since a deployment must not go
/// ahead blind. A CloudWatch that cannot be read (no region, refused credentials,
/// throttling past the retries, an endpoint down) is `unknown`, with the sentence of its
/// ``DiscfgError``. `health` is not read here: agents report it to the store, and the
/// monitor reads it there.
///
/// ```swift
/// let reader = SignalReader.standard()
/// let readings = await reader.read(deployment.signals)
/// ```
public final class SignalReader: Sendable {
    /// What alarm signals are read with.
    public enum Alarms: Sendable {
        /// A client of CloudWatch.
        case client(CloudWatchAlarms)
        /// No client could be made, and why: every alarm reads `unknown` with this sentence.
        case unavailable(String)
    }

    /// Where alarms are read.
    public let alarms: Alarms
    /// What health URLs are read with.
    public let probe: HealthProbe

    /// A reader of alarms through `alarms` and of URLs through `probe`.
    public init(alarms: Alarms, probe: HealthProbe = HealthProbe()) {
        self.alarms = alarms
        self.probe = probe
    }

    /// A reader with the usual AWS settings, read once here: the region as
    /// ``RegionResolver`` finds it (`region` first, then `AWS_REGION`,
    /// `AWS_DEFAULT_REGION`, the profile's), the endpoint `AWS_ENDPOINT_URL_CLOUDWATCH`
    /// then `AWS_ENDPOINT_URL` names (AWS's own otherwise), credentials from the standard
    /// chain. Without a region alarms read `unknown`; URLs are read all the same.
    public static func standard(
        region: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        profile: String? = nil,
        credentials: AWSCredentials? = nil,
        probe: HealthProbe.Configuration = HealthProbe.Configuration()
    ) -> SignalReader {
        let alarms: Alarms
        do {
            let region = try RegionResolver.resolve(explicit: region, environment: environment, profile: profile)
            alarms = .client(CloudWatchAlarms(
                configuration: .init(region: region, endpoint: CloudWatchAlarms.Configuration.endpoint(environment: environment)),
                credentialProvider: CredentialChain.standard(explicit: credentials, environment: environment, profile: profile)
            ))
        } catch {
            alarms = .unavailable("CloudWatch alarms cannot be read: \(error)")
        }
        return SignalReader(alarms: alarms, probe: HealthProbe(configuration: probe))
    }

    /// Closes the connection pools.
    public func shutdown() async {
        if case .client(let client) = alarms { try? await client.shutdown() }
        try? await probe.shutdown()
    }

    /// One reading of each signal: alarms in as few `DescribeAlarms` calls as there are
    /// hundreds of them, URLs at once, each within the probe's timeout.
    public func read(_ signals: [DeploymentSignal]) async -> [DeploymentSignal: SignalReading] {
        var names: [String] = []
        var urls: [String] = []
        var readings: [DeploymentSignal: SignalReading] = [:]
        for signal in signals {
            switch signal {
            case .alarm(let name): names.append(name)
            case .http(let url): urls.append(url)
            case .health: readings[.health] = .unknown("read by the monitor from agents' reports")
            }
        }
        async let alarmReadings = names.isEmpty ? [:] : readAlarms(names)
        await withTaskGroup(of: (String, SignalReading).self) { group in
            for url in Set(urls) { group.addTask { (url, await self.probe.read(url)) } }
            for await (url, reading) in group { readings[.http(url)] = reading }
        }
        for (name, reading) in await alarmReadings { readings[.alarm(name)] = reading }
        return readings
    }

    /// The reading of each alarm in `names`, by AppConfig's rule.
    func readAlarms(_ names: [String]) async -> [String: SignalReading] {
        let answers: [String: CloudWatchAlarms.Answer]
        do {
            answers = try await alarmStates(names)
        } catch {
            let reason = switch error {
            case let error as DiscfgError: error.message
            case is CancellationError: "CloudWatch alarms were not read: the reading was cancelled"
            default: "CloudWatch alarms cannot be read: \(error)"
            }
            return Dictionary(names.map { ($0, .unknown(reason)) }, uniquingKeysWith: { first, _ in first })
        }
        return answers.mapValues(Self.reading)
    }

    /// What CloudWatch says of each alarm in `names`.
    ///
    /// - Throws: ``DiscfgError`` in one sentence naming the alarm (the first of `names`,
    ///   and how many more), the service and what went wrong: `permissionDenied`,
    ///   `throttled` or `unavailable`.
    public func alarmStates(_ names: [String]) async throws -> [String: CloudWatchAlarms.Answer] {
        switch alarms {
        case .unavailable(let reason):
            throw DiscfgError(.unavailable, reason, field: "signals")
        case .client(let client):
            do {
                return try await client.states(of: names)
            } catch let error as AWSError {
                throw Self.discfgError(error, alarms: names, endpoint: client.client.configuration.resolvedEndpoint)
            }
        }
    }

    /// AppConfig's rule: OK is healthy, ALARM and INSUFFICIENT_DATA are not, nor is a
    /// missing alarm; a state CloudWatch added since is unknown.
    static func reading(_ answer: CloudWatchAlarms.Answer) -> SignalReading {
        switch answer {
        case .missing:
            return .unhealthy("no such alarm in CloudWatch")
        case .found(let state):
            let reason = state.reason.isEmpty ? "" : ": \(state.reason.prefix(300))"
            switch state.value {
            case .ok: return .healthy
            case .alarm, .insufficientData: return .unhealthy("the alarm is in \(state.value)\(reason)")
            case .other: return .unknown("the alarm is in \(state.value), a state discfg does not know\(reason)")
            }
        }
    }
}
