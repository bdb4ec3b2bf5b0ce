// discfg-lambda-bench: how fast `discfg lambda` answers through the Lambda Runtime API.
//
//   swift build -c release && .build/release/discfg-lambda-bench [FUNCTION] [cold-runs] [warm-requests] [CLI]
//
// FUNCTION is the binary run as `FUNCTION lambda` (a packaged `bootstrap` works too);
// CLI (default: FUNCTION) prepares the stores.
//
// Cold start: from spawning the process (the runtime's bootstrap) to its first API
// response arriving at the Runtime API, over N fresh processes. Warm: the time from
// queuing an API Gateway (payload 2.0) GET to its response, on one running process.
// Stores: SQLite (a file made beforehand) and DynamoDB on moto_server (a local Python
// server, so its own latency dominates those rows). Not a test: nothing is asserted.
import DiscfgTestSupport
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let binary = arguments.first ?? ".build/release/discfg"
let coldRuns = arguments.dropFirst().first.flatMap(Int.init) ?? 20
let warmRequests = arguments.dropFirst(2).first.flatMap(Int.init) ?? 500
let cli = arguments.dropFirst(3).first ?? binary

guard FileManager.default.isExecutableFile(atPath: binary) else {
    FileHandle.standardError.write(Data("discfg-lambda-bench: \(binary) is not an executable; build it first (swift build -c release)\n".utf8))
    exit(2)
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func run(_ arguments: [String], environment: [String: String]) async throws {
    let finished = try await ChildProcess.run(cli, arguments, environment: environment, stdout: .discard, stderr: .discard)
    guard finished.status == 0 else { throw NSError(domain: "discfg-lambda-bench", code: Int(finished.status), userInfo: [NSLocalizedDescriptionKey: "discfg \(arguments.joined(separator: " ")) failed"]) }
}

func getEvent() -> Data {
    Data(#"""
    {"version":"2.0","routeKey":"$default","rawPath":"/v1/bench/keys/db/host","rawQueryString":"","headers":{"host":"bench.execute-api.us-east-1.amazonaws.com"},
     "requestContext":{"requestId":"bench","stage":"$default","http":{"method":"GET","path":"/v1/bench/keys/db/host"},
     "authorizer":{"iam":{"userArn":"arn:aws:iam::123456789012:user/bench"}}},"isBase64Encoded":false}
    """#.utf8)
}

func launch(_ emulator: RuntimeAPIEmulator, environment: [String: String]) throws -> ChildProcess {
    var environment = environment
    environment["AWS_LAMBDA_RUNTIME_API"] = emulator.address
    return try ChildProcess.launch(binary, ["lambda"], environment: environment, stdout: .discard, stderr: .inherit)
}

struct Row {
    var store: String
    var cold: [Double]
    var warm: [Double]
}

func measure(store: String, environment: [String: String]) async throws -> Row {
    var cold: [Double] = []
    for _ in 0..<coldRuns {
        let emulator = try await RuntimeAPIEmulator.start()
        async let answer = emulator.invocation(eventJSON: getEvent())
        let spawned = ContinuousClock.now
        let process = try launch(emulator, environment: environment)
        let invocation = try await answer
        guard case .response = invocation.result else { throw NSError(domain: "discfg-lambda-bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(invocation.result)"]) }
        cold.append(milliseconds(invocation.finishedAt - spawned))
        await process.kill(SIGTERM)
        await emulator.stop()
    }
    let emulator = try await RuntimeAPIEmulator.start()
    let process = try launch(emulator, environment: environment)
    var warm: [Double] = []
    for index in 0..<(warmRequests + 10) {
        let invocation = try await emulator.invocation(eventJSON: getEvent())
        if index >= 10 { warm.append(milliseconds(invocation.finishedAt - invocation.queuedAt)) }
    }
    await process.kill(SIGTERM)
    await emulator.stop()
    return Row(store: store, cold: cold, warm: warm)
}

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-lambda-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }
var base = ChildProcess.environment()
base["HOME"] = scratch.path
base["DISCFG_AUTH"] = "iam"
base["DISCFG_LOG_LEVEL"] = "warning"

var rows: [Row] = []
var sqlite = base
sqlite["DISCFG_STORE"] = "sqlite://\(scratch.path)/bench.db"
try await run(["create", "bench"], environment: sqlite)
try await run(["set", "bench", "db/host", "db1.internal"], environment: sqlite)
rows.append(try await measure(store: "sqlite", environment: sqlite))

let moto = try await MotoServer.start(timeout: .seconds(60))
var dynamo = base
dynamo["DISCFG_STORE"] = "dynamodb://us-east-1/discfg-bench?endpoint=\(moto.endpoint.absoluteString)"
dynamo["AWS_ACCESS_KEY_ID"] = "testing"
dynamo["AWS_SECRET_ACCESS_KEY"] = "testing"
dynamo["AWS_REGION"] = "us-east-1"
try await run(["create", "bench"], environment: dynamo)
try await run(["set", "bench", "db/host", "db1.internal"], environment: dynamo)
rows.append(try await measure(store: "dynamodb (moto)", environment: dynamo))
await moto.stop()

func cell(_ value: Double) -> String { String(format: "%.1f ms", value) }
print("discfg lambda through the Runtime API: \(coldRuns) cold starts, \(warmRequests) warm GETs per store")
print("| store | cold p50 | cold p90 | cold min | warm p50 | warm p99 |")
print("|---|---|---|---|---|---|")
for row in rows {
    print("| \(row.store) | \(cell(percentile(row.cold, 0.5))) | \(cell(percentile(row.cold, 0.9))) | \(cell(row.cold.min() ?? .nan)) | \(cell(percentile(row.warm, 0.5))) | \(cell(percentile(row.warm, 0.99))) |")
}
