// json-schema-bench: what validating a stored value against its schema costs. The schema has
// 40 properties (10 integers with minimum and maximum, 10 strings with maxLength and pattern
// `^[a-z][a-z0-9-]*$`, 10 booleans, 10 strings with format hostname; all required, no others
// allowed); the instance is a valid object for it. Not a test: it prints figures, it asserts
// only that the instance stays valid.
//
//   json-schema-bench [N] [validate | parse | parse-only]     (default 10000 validate)
//
// `validate` validates the parsed instance N times; `parse` parses it from its bytes and then
// validates it, N times (what a write does); `parse-only` only parses. Instructions per run,
// from callgrind, are the difference between N = 101 and N = 1, divided by 100:
//
//   swift build -c release --product json-schema-bench
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out .build/release/json-schema-bench 1
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out .build/release/json-schema-bench 101
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DiscfgJSON
import JSONSchema

let arguments = CommandLine.arguments.dropFirst()
let runs = arguments.first.flatMap { Int($0) } ?? 10_000
let mode = arguments.dropFirst().first ?? "validate"
guard runs >= 0, ["validate", "parse", "parse-only"].contains(mode) else {
    print("usage: json-schema-bench [N] [validate | parse | parse-only]")
    exit(2)
}

/// The schema: ten properties of each kind, every one required, nothing else allowed.
func benchmarkSchema() -> JSONValue {
    var properties = JSONObject()
    var required: [JSONValue] = []
    for i in 0..<10 {
        properties["port\(i)"] = ["type": "integer", "minimum": 1, "maximum": 65535]
        properties["name\(i)"] = ["type": "string", "maxLength": 63, "pattern": "^[a-z][a-z0-9-]*$"]
        properties["enabled\(i)"] = ["type": "boolean"]
        properties["host\(i)"] = ["type": "string", "format": "hostname"]
        required += [.string("port\(i)"), .string("name\(i)"), .string("enabled\(i)"), .string("host\(i)")]
    }
    return [
        "type": "object",
        "properties": .object(properties),
        "required": .array(required),
        "additionalProperties": false,
    ]
}

/// A valid instance, as the bytes a client would send.
func benchmarkInstance() -> [UInt8] {
    var members: [String] = []
    for i in 0..<10 {
        members.append(#""port\#(i)": \#(8000 + i)"#)
        members.append(#""name\#(i)": "service-\#(i)-primary""#)
        members.append(#""enabled\#(i)": \#(i % 2 == 0)"#)
        members.append(#""host\#(i)": "db-\#(i).eu-west-1.example.internal""#)
    }
    return Array(("{" + members.joined(separator: ", ") + "}").utf8)
}

let validator: JSONSchemaValidator
do {
    validator = try JSONSchemaValidator(schema: benchmarkSchema())
} catch {
    print("the benchmark schema is refused: \(error)")
    exit(1)
}
let bytes = benchmarkInstance()
let instance = try JSONParser.parse(bytes)
let check = validator.validate(instance)
guard check.isValid else {
    print("the benchmark instance is invalid: \(check.errors.map(\.description))")
    exit(1)
}

var valid = 0
let clock = ContinuousClock()
let elapsed = try clock.measure {
    for _ in 0..<runs {
        switch mode {
        case "validate":
            if validator.validate(instance).isValid { valid += 1 }
        case "parse":
            if validator.validate(try JSONParser.parse(bytes)).isValid { valid += 1 }
        default:
            if case .object = try JSONParser.parse(bytes) { valid += 1 }
        }
    }
}
precondition(valid == runs, "an instance was found invalid")
let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
print("\(mode): \(runs) runs, \(runs == 0 ? 0 : Int(nanoseconds / Double(runs))) ns each (\(bytes.count)-byte instance, 40-property schema)")
