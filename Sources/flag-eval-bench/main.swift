// flag-eval-bench: what evaluating one feature flag costs. The flag has five targeting rules
// (`in`, `ends_with`, `sem_ver` leading to `fractional` over three weighted variants, `==`,
// `>`); the context reaches the third rule, so each evaluation runs the first three
// conditions and buckets the targeting key with `fractional`. Not a test: it prints figures,
// it asserts only that the answer stays what flagd gives.
//
//   flag-eval-bench [N]     (default 100000)
//   flag-eval-bench flag-set | context     (print the flag set or the context, for
//                                           benchmarks/flags.sh to serve the same flag)
//
// Instructions per evaluation, from callgrind, are the difference between N = 1001 and
// N = 1, divided by 1000:
//
//   swift build -c release --product flag-eval-bench
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out .build/release/flag-eval-bench 1
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out .build/release/flag-eval-bench 1001
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DiscfgFlags
import DiscfgJSON


let flagSet = #"""
    {"flags": {"checkout": {
      "state": "ENABLED",
      "variants": {"control": "a", "treatment": "b", "holdout": "c", "beta": "d"},
      "defaultVariant": "control",
      "targeting": {"if": [
        {"in": [{"var": "email"}, ["ops@example.org", "qa@example.org"]]}, "beta",
        {"ends_with": [{"var": "email"}, "@example.com"]}, "treatment",
        {"sem_ver": [{"var": "appVersion"}, ">=", "2.4.0"]}, {"fractional": [["control", 45], ["treatment", 45], ["holdout", 10]]},
        {"==": [{"var": "plan"}, "enterprise"]}, "treatment",
        {">": [{"var": "seats"}, 100]}, "holdout",
        null
      ]}
    }}}
    """#
let context = #"{"targetingKey": "user-1234", "email": "jane@acme.io", "appVersion": "2.5.1", "plan": "pro", "seats": 12}"#

let argument = CommandLine.arguments.dropFirst().first
switch argument {
case "flag-set":
    print(flagSet)
    exit(0)
case "context":
    print(context)
    exit(0)
default:
    break
}
let runs = argument.map { Int($0) ?? -1 } ?? 100_000
guard runs >= 0 else {
    print("usage: flag-eval-bench [N | flag-set | context]")
    exit(2)
}

let catalog: FlagCatalog
let evaluationContext: JSONObject
do {
    catalog = FlagCatalog(try FlagSet(parsing: flagSet), name: "/flags/checkout")
    guard case .object(let object) = try JSONParser.parse(context) else { fatalError("the context is an object") }
    evaluationContext = object
} catch {
    print("flag-eval-bench: \(error)")
    exit(1)
}

let evaluator = FlagEvaluator(clock: { 1_700_000_000 })
var variants: [String: Int] = [:]
var clock = timespec()
clock_gettime(CLOCK_MONOTONIC, &clock)
let start = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
for _ in 0..<runs {
    let answer = evaluator.evaluate("checkout", in: catalog, context: evaluationContext)
    variants[answer.variant ?? "none", default: 0] += 1
}
clock_gettime(CLOCK_MONOTONIC, &clock)
let seconds = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 - start
let answer = evaluator.evaluate("checkout", in: catalog, context: evaluationContext)
guard answer.reason == .targetingMatch, let variant = answer.variant, ["control", "treatment", "holdout"].contains(variant) else {
    print("flag-eval-bench: unexpected answer \(answer)")
    exit(1)
}
print("\(runs) evaluations in \(String(format: "%.3f", seconds)) s (\(runs > 0 ? String(format: "%.0f", Double(runs) / seconds) : "-")/s); variant \(variant)")
