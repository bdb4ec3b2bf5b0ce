// discfg-write-bench: what checking a change costs on the write path. It writes a
// 40-member JSON value to one key of an embedded store, N times, in one of four ways, so
// instructions per write can be read from callgrind and compared:
//
//   plain      set, no schema anywhere in the config
//   validated  set, the key holding a 40-property schema (the value meets it)
//   prefix     set, the key's prefix holding a schema for its document
//   patch      a merge patch changing one member, no schema
//   json-patch a JSON patch (test + replace of one member), no schema
//
//   discfg-write-bench MODE [N] [sqlite | memory]       (default N = 1000, sqlite)
//
// Instructions per write are the difference between N = 101 and N = 1, divided by 100:
//
//   swift build -c release --product discfg-write-bench
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out .build/release/discfg-write-bench validated 1
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out .build/release/discfg-write-bench validated 101
//
// Not a test: it prints the wall time too, but instruction counts are the figures to
// compare (they do not wobble on a busy machine).
import DiscfgCore
import DiscfgJSON
import DiscfgSQLite
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let modes = ["plain", "validated", "prefix", "patch", "json-patch"]
guard let mode = arguments.first, modes.contains(mode) else {
    print("usage: discfg-write-bench \(modes.joined(separator: " | ")) [N] [sqlite | memory]")
    exit(2)
}
let runs = arguments.dropFirst().first.flatMap(Int.init) ?? 1000
let kind = arguments.dropFirst(2).first ?? "sqlite"
guard runs >= 0, ["sqlite", "memory"].contains(kind) else {
    print("usage: discfg-write-bench \(modes.joined(separator: " | ")) [N] [sqlite | memory]")
    exit(2)
}

/// The schema: ten properties of each kind, every one required, nothing else allowed.
func schema() -> Data {
    var properties: [String] = []
    var required: [String] = []
    for i in 0..<10 {
        properties.append(#""port\#(i)": {"type": "integer", "minimum": 1, "maximum": 65535}"#)
        properties.append(#""name\#(i)": {"type": "string", "maxLength": 63, "pattern": "^[a-z][a-z0-9-]*$"}"#)
        properties.append(#""enabled\#(i)": {"type": "boolean"}"#)
        properties.append(#""host\#(i)": {"type": "string", "format": "hostname"}"#)
        required += ["\"port\(i)\"", "\"name\(i)\"", "\"enabled\(i)\"", "\"host\(i)\""]
    }
    let text = #"{"type": "object", "properties": {\#(properties.joined(separator: ", "))}, "required": [\#(required.joined(separator: ", "))], "additionalProperties": false}"#
    return Data(text.utf8)
}

/// A valid value, its first port set to `port`.
func value(port: Int) -> Data {
    var members: [String] = []
    for i in 0..<10 {
        members.append(#""port\#(i)": \#(i == 0 ? port : 8000 + i)"#)
        members.append(#""name\#(i)": "service-\#(i)-primary""#)
        members.append(#""enabled\#(i)": \#(i % 2 == 0)"#)
        members.append(#""host\#(i)": "db-\#(i).eu-west-1.example.internal""#)
    }
    return Data(("{" + members.joined(separator: ", ") + "}").utf8)
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-write-bench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let store: any ConfigStore = kind == "memory" ? MemoryStore() : try SQLiteStore(path: directory.appendingPathComponent("bench.db").path)
let config = try ConfigName("bench")
_ = try await store.createConfig(config, settings: ConfigSettings(history: .last(10)))
let key = try Key("/app/settings")
let options = SetOptions(contentType: "application/json")
_ = try await store.set(key, to: value(port: 1), in: config, options: options)
switch mode {
case "validated": _ = try await store.setSchema(.key(key), to: schema(), in: config, force: false)
case "prefix":
    // The document of /app/ is {"settings": value}.
    let document = #"{"type": "object", "properties": {"settings": \#(String(decoding: schema(), as: UTF8.self))}, "required": ["settings"]}"#
    _ = try await store.setSchema(.prefix(KeyPrefix("/app/")), to: Data(document.utf8), in: config, force: false)
default: break
}

let started = ContinuousClock.now
for run in 0..<runs {
    let port = 1000 + run % 60000
    switch mode {
    case "patch":
        _ = try await store.patch(key, .merge(["port0": .number(JSONNumber(port))]), in: config, conditions: [])
    case "json-patch":
        let operations = JSONPatch([.replace(path: try JSONPointer("/port0"), value: .number(JSONNumber(port)))])
        _ = try await store.patch(key, .json(operations), in: config, conditions: [])
    default:
        _ = try await store.set(key, to: value(port: port), in: config, options: options)
    }
}
let elapsed = ContinuousClock.now - started
let perWrite = runs > 0 ? elapsed / runs : .zero
print("\(mode) on \(kind): \(runs) writes in \(elapsed), \(perWrite) each")
