// discfg-bench: what each store operation costs on DynamoDB, in round trips and capacity
// units. It starts moto_server on a free loopback port, runs every operation kind N times
// through DynamoDBStore, and prints one row per kind. Not a test: nothing is timed.
//
//   swift run discfg-bench [N]        (default N = 20)
//   swift run discfg-bench --json [N] (the same figures as one JSON array, for benchmarks/cost.sh)
//
// moto answers every call with a fixed ConsumedCapacity, so "reported" columns show what
// the endpoint said and "computed" columns apply DynamoDB's documented rules to the item
// sizes actually read and written (see CapacityEstimate).
import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import DiscfgStores
import DiscfgTestSupport
import Foundation

let arguments = CommandLine.arguments.dropFirst()
let json = arguments.contains("--json")
let runs = arguments.first { $0 != "--json" }.flatMap(Int.init) ?? 20

func row(_ cells: [String], _ widths: [Int]) -> String {
    zip(cells, widths).map { cell, width in
        width < 0 ? cell.padding(toLength: -width, withPad: " ", startingAt: 0)
            : String(repeating: " ", count: max(0, width - cell.count)) + cell
    }.joined(separator: "  ")
}

let moto: MotoServer
do {
    moto = try await MotoServer.start(timeout: .seconds(60))
} catch {
    FileHandle.standardError.write(Data("discfg-bench: \(error)\n".utf8))
    exit(1)
}
var opener = StoreOpener(environment: [:])
opener.region = "us-east-1"
opener.credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "bench")
let store = try opener.openDynamoDB(DynamoDBLocation(table: "discfg-bench", endpoint: moto.endpoint))
let config = try ConfigName("bench")
_ = try await store.createConfig(config, settings: ConfigSettings())
let small = Data(String(repeating: "v", count: 100).utf8)
let fourKB = Data(repeating: 0x61, count: 4000)
/// A 4 KB value of random letters: each update writes a value the key did not hold.
func freshFourKB() -> Data { Data((0..<4000).map { _ in UInt8.random(in: 0x61...0x7A) }) }
for index in 0..<10 { _ = try await store.set(Key("/list/k\(index)"), to: small, in: config) }
_ = try await store.set(Key("/get/4k"), to: fourKB, in: config)
_ = try await store.set(Key("/cas"), to: small, in: config)

/// The revisions of the 4 KB updates, for the watch read of them.
final class Revisions: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Revision] = []
    func append(_ revision: Revision) { lock.withLock { values.append(revision) } }
    var last5: Revision { lock.withLock { values.suffix(5).first ?? 1 } }
}
let fourKBUpdates = Revisions()

struct Operation {
    let name: String
    let body: (Int) async throws -> Void
}

let operations: [Operation] = [
    Operation(name: "get (100 B value)") { _ in _ = try await store.get(Key("/list/k1"), in: config) },
    Operation(name: "get (4 KB value)") { _ in _ = try await store.get(Key("/get/4k"), in: config) },
    Operation(name: "get (missing key)") { _ in _ = try await store.get(Key("/missing"), in: config) },
    Operation(name: "get at past revision") { _ in _ = try await store.get(Key("/cas"), in: config, atRevision: 1) },
    Operation(name: "set (new key, 100 B)") { run in _ = try await store.set(Key("/new/k\(run)"), to: small, in: config) },
    Operation(name: "set (update, 100 B)") { _ in _ = try await store.set(Key("/list/k2"), to: small, in: config) },
    Operation(name: "set (update, 4 KB)") { _ in fourKBUpdates.append(try await store.set(Key("/get/4k"), to: freshFourKB(), in: config).revision) },
    Operation(name: "set --if-version") { _ in
        let current = try await store.get(Key("/cas"), in: config)
        _ = try await store.set(Key("/cas"), to: small, in: config, options: SetOptions(conditions: [.version(current?.version ?? 0)]))
    },
    Operation(name: "delete") { run in _ = try await store.delete(Key("/new/k\(run)"), in: config, conditions: []) },
    Operation(name: "list (10 keys)") { _ in _ = try await store.list(in: config, ListQuery(prefix: KeyPrefix("/list/"))) },
    Operation(name: "history (key, 20)") { _ in _ = try await store.history(of: Key("/list/k2"), in: config, HistoryQuery(limit: 20)) },
    Operation(name: "watch poll (no change)") { _ in
        let revision = try await store.configInfo(config).revision
        _ = try await store.events(in: config, scope: .prefix(.root), from: revision.next, limit: 100)
    },
    Operation(name: "watch read (5 × 4 KB)") { _ in
        _ = try await store.events(in: config, scope: .prefix(KeyPrefix("/get/")), from: fourKBUpdates.last5, limit: 5)
    },
    Operation(name: "history (4 KB key, 20)") { _ in _ = try await store.history(of: Key("/get/4k"), in: config, HistoryQuery(limit: 20)) },
    Operation(name: "get 4 KB at past rev.") { _ in _ = try await store.get(Key("/get/4k"), in: config, atRevision: fourKBUpdates.last5) },
    Operation(name: "export") { _ in _ = try await store.export(config) },
    Operation(name: "config info") { _ in _ = try await store.configInfo(config) },
]

let widths = [-24, 6, -46, 9, 9, 9, 5]
var measured: [[String: Any]] = []
func say(_ line: String) { if !json { print(line) } }
say("DynamoDB cost per operation (moto_server at \(moto.endpoint.absoluteString), \(runs) runs each)")
say(row(["operation", "round", "DynamoDB calls per operation", "reported", "computed", "computed", "Scan"], widths))
say(row(["", "trips", "", "units", "RCU", "WCU", ""], widths))
var scans = 0
for operation in operations {
    await store.metrics.reset()
    store.estimatedCapacity.reset()
    for run in 0..<runs { try await operation.body(run) }
    let reported = await store.metrics.snapshot()
    let computed = store.estimatedCapacity.snapshot()
    let trips = Double(reported.values.reduce(0) { $0 + $1.roundTrips }) / Double(runs)
    let calls = reported.sorted { $0.key < $1.key }.map { "\($0.key)×\(String(format: "%g", Double($0.value.calls) / Double(runs)))" }.joined(separator: " ")
    let units = reported.values.reduce(0) { $0 + $1.capacityUnits } / Double(runs)
    let rcu = computed.values.reduce(0) { $0 + $1.read } / Double(runs)
    let wcu = computed.values.reduce(0) { $0 + $1.write } / Double(runs)
    let scanCalls = reported["Scan"]?.calls ?? 0
    scans += scanCalls
    say(row([operation.name, String(format: "%g", trips), calls, String(format: "%g", units), String(format: "%g", rcu), String(format: "%g", wcu), String(scanCalls)], widths))
    measured.append([
        "operation": operation.name, "runs": runs, "roundTrips": trips, "rcu": rcu, "wcu": wcu, "scans": scanCalls,
        "calls": Dictionary(uniqueKeysWithValues: reported.map { ($0.key, Double($0.value.calls) / Double(runs)) }),
    ])
}
if json {
    let data = try JSONSerialization.data(withJSONObject: measured, options: [.prettyPrinted, .sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}
say("\nround trips and reported units come from ConsumedCapacityRecorder; computed RCU/WCU apply DynamoDB's")
say("documented rules to the item sizes sent and received (moto reports a fixed number per call).")
say("Scan calls in total: \(scans)")
try await store.client.shutdown()
await moto.stop()
