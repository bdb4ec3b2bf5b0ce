// discfg-agent-sim: many agents following one config on DynamoDB (moto_server), and what
// that costs the table. Each simulated agent is the agent's own ReplicaStore and
// ConfigFollower over a StoreSource: every interval one eventually consistent GetItem of
// the config's meta item and, when its revision moved, a read of the events since. A writer sets
// keys at a steady rate; the staleness of a change is the time from the write's
// acknowledgement to each agent holding it.
//
//   swift run discfg-agent-sim [--agents 500] [--minutes 5] [--changes-per-minute 10]
//                              [--interval 15] [--keys 100] [--json] [--deploy]
//
// --deploy: instead, the agents follow one staged deployment and its rollback on an alarm
// (see DeploymentRun.swift).
//
// The writer runs for --minutes; the agents go on for one more interval so every change is
// seen, and requests per agent per hour are counted over the agents' whole run.
import DiscfgAWS
import DiscfgAgent
import DiscfgCore
import DiscfgDynamoDB
import DiscfgStores
import DiscfgTestSupport
import Foundation

struct Settings {
    var agents = 500
    var minutes = 5.0
    var changesPerMinute = 10.0
    var interval = 15.0
    var keys = 100
    var json = false
    var deploy = false

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func number(_ flag: String) throws -> Double {
            guard let text = rest.popFirst(), let value = Double(text), value > 0 else {
                throw DiscfgError.invalid(flag, "\(flag) needs a positive number")
            }
            return value
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--agents": agents = Int(try number(flag))
            case "--minutes": minutes = try number(flag)
            case "--changes-per-minute": changesPerMinute = try number(flag)
            case "--interval": interval = try number(flag)
            case "--keys": keys = Int(try number(flag))
            case "--json": json = true
            case "--deploy": deploy = true
            default: throw DiscfgError.invalid("arguments", "unknown argument \(flag)")
            }
        }
    }
}

/// When each revision was acknowledged to the writer, and when each agent first held it.
actor Timeline {
    private var acknowledged: [UInt64: ContinuousClock.Instant] = [:]
    private var staleness: [Double] = []
    private(set) var missed = 0
    private var checks: [Double] = []

    /// Records how long one check took (the GetItem and, after a change, the event read).
    func checked(taking seconds: Double) { checks.append(seconds) }
    func checkTimes() -> [Double] { checks.sorted() }

    func acknowledge(_ revision: Revision, at instant: ContinuousClock.Instant) { acknowledged[revision.rawValue] = instant }

    /// Records that one agent now holds `revisions`, as of `instant`.
    func held(_ revisions: [Revision], at instant: ContinuousClock.Instant) {
        for revision in revisions {
            guard let written = acknowledged[revision.rawValue] else { missed += 1; continue }
            // An agent may read an event before the writer's await returns; that is no staleness.
            staleness.append(max(0, (instant - written).seconds))
        }
    }

    func writes() -> Int { acknowledged.count }
    func samples() -> [Double] { staleness.sorted() }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

let settings: Settings
do {
    settings = try Settings(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("discfg-agent-sim: \(error)\n".utf8))
    exit(2)
}
let moto: MotoServer
do {
    moto = try await MotoServer.start(timeout: .seconds(60))
} catch {
    FileHandle.standardError.write(Data("discfg-agent-sim: \(error)\n".utf8))
    exit(1)
}
var opener = StoreOpener(environment: [:])
opener.region = "us-east-1"
opener.credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "sim")
// Two stores on one table, so the writer's calls and the agents' calls are counted apart.
let writer = try opener.openDynamoDB(DynamoDBLocation(table: "discfg-sim", endpoint: moto.endpoint))
let readers = try opener.openDynamoDB(DynamoDBLocation(table: "discfg-sim", endpoint: moto.endpoint, consistentReads: false))
let config = try ConfigName("sim")
_ = try await writer.createConfig(config, settings: ConfigSettings())
let value = Data(String(repeating: "v", count: 100).utf8)
for index in 0..<settings.keys { _ = try await writer.set(Key("/app/k\(index)"), to: value, in: config) }
let source = StoreSource(readers, description: "dynamodb:///discfg-sim")
var followers: [(ConfigFollower, ReplicaStore)] = []
for _ in 0..<settings.agents {
    let replica = ReplicaStore(source: source.description, configs: [config])
    let follower = ConfigFollower(config: config, source: source, replica: replica)
    _ = await follower.refresh()
    followers.append((follower, replica))
}
let start = try await writer.configInfo(config).revision
if settings.deploy {
    try await DeploymentRun().run(moto: moto, writer: writer, config: config, followers: followers, interval: settings.interval)
    try await writer.client.shutdown()
    try await readers.client.shutdown()
    await moto.stop()
    exit(0)
}

let timeline = Timeline()
let clock = ContinuousClock()
let began = clock.now
let writesEnd = began + .seconds(settings.minutes * 60)
let agentsEnd = writesEnd + .seconds(settings.interval + 1)
await readers.metrics.reset()
readers.estimatedCapacity.reset()

/// One agent: its follower's refresh every interval, starting at a random phase.
@Sendable func follow(_ follower: ConfigFollower, _ replica: ReplicaStore) async throws -> Int {
    var known = replica.revision(of: config) ?? start
    var failures = 0
    var tick = began + .seconds(Double.random(in: 0..<settings.interval))
    while tick < agentsEnd {
        try await Task.sleep(until: tick, clock: clock)
        tick = tick + .seconds(settings.interval)
        let checking = clock.now
        let outcome = await follower.refresh()
        await timeline.checked(taking: (clock.now - checking).seconds)
        if case .failed = outcome { failures += 1 }
        let now = replica.revision(of: config) ?? known
        if now > known {
            await timeline.held((known.rawValue + 1...now.rawValue).map { Revision($0) }, at: clock.now)
            known = now
        }
    }
    return failures
}

let failures = try await withThrowingTaskGroup(of: Int.self) { group in
    for (follower, replica) in followers { group.addTask { try await follow(follower, replica) } }
    group.addTask {
        let gap = 60 / settings.changesPerMinute
        var next = began + .seconds(gap / 2)
        var count = 0
        while next < writesEnd {
            try await Task.sleep(until: next, clock: clock)
            next = next + .seconds(gap)
            let event = try await writer.set(Key("/app/k\(count % settings.keys)"), to: Data("change \(count)".utf8), in: config)
            await timeline.acknowledge(event.revision, at: clock.now)
            count += 1
        }
        return 0
    }
    var failed = 0
    for try await count in group { failed += count }
    return failed
}
let elapsed = (clock.now - began).seconds
let counted = await readers.metrics.snapshot()
let calls = counted.mapValues(\.calls)
let total = calls.values.reduce(0, +)
let writes = await timeline.writes()
let samples = await timeline.samples()
let missed = await timeline.missed
let checkTimes = await timeline.checkTimes()
let hours = elapsed / 3600
let units = readers.estimatedCapacity.snapshot()
let allRCU = units.values.reduce(0) { $0 + $1.read }
let perAgentHour = Double(total) / Double(settings.agents) / hours
let checksPerAgentHour = Double(checkTimes.count) / Double(settings.agents) / hours
let eventReadsPerChangePerAgent = Double(total) / Double(settings.agents) / Double(max(writes, 1)) - checksPerAgentHour * hours / Double(max(writes, 1))

if settings.json {
    let result: [String: Any] = [
        "agents": settings.agents, "minutes": settings.minutes, "changesPerMinute": settings.changesPerMinute,
        "interval": settings.interval, "keys": settings.keys, "seconds": elapsed, "writes": writes,
        "calls": calls, "requestsPerAgentHour": perAgentHour, "checksPerAgentHour": checksPerAgentHour,
        "eventReadsPerChangePerAgent": eventReadsPerChangePerAgent, "rcu": allRCU,
        "checkSecondsP50": percentile(checkTimes, 0.5), "checkSecondsP99": percentile(checkTimes, 0.99),
        "stalenessP50": percentile(samples, 0.5), "stalenessP99": percentile(samples, 0.99),
        "stalenessMax": samples.last ?? .nan, "samples": samples.count, "missed": missed, "failures": failures,
    ]
    let data = try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} else {
    print("\(settings.agents) agents at \(settings.interval) s, \(writes) changes in \(settings.minutes) min, moto_server at \(moto.endpoint.absoluteString)")
    print("table calls by the agents: " + calls.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    print(String(format: "requests per agent per hour: %.1f (checks %.1f; requests per change per agent beyond the checks %.2f)", perAgentHour, checksPerAgentHour, eventReadsPerChangePerAgent))
    print(String(format: "computed RCU by the agents %.1f; a check took p50 %.3f s, p99 %.3f s", allRCU, percentile(checkTimes, 0.5), percentile(checkTimes, 0.99)))
    print(String(format: "staleness over %d (agent, change) pairs: p50 %.2f s, p99 %.2f s, max %.2f s", samples.count, percentile(samples, 0.5), percentile(samples, 0.99), samples.last ?? .nan))
    print("changes never held: \(Double(samples.count) == Double(writes * settings.agents) ? 0 : writes * settings.agents - samples.count), failed checks: \(failures)")
}
try await writer.client.shutdown()
try await readers.client.shutdown()
await moto.stop()
