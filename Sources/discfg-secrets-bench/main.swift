// discfg-secrets-bench: what sealing and opening a secret costs, per value, at sizes up
// to the value limit, with the data key already unwrapped (as `get` and `exec` have it
// after their first secret). Not a test: it prints figures, it asserts nothing.
//
//   swift run -c release discfg-secrets-bench [N]     (default N = 20000 per size)
import Crypto
import DiscfgCore
import DiscfgSecrets
import Foundation

let runs = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
let dataKey = SymmetricKey(size: .bits256)
let binding = try SecretBinding(config: ConfigName("bench"), key: Key("/db/password"), createRevision: Revision(3), version: 7)

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

print("size      seal µs   open µs   (mean of \(runs), data key unwrapped)")
for size in [64, 1024, 4096, 65536] {
    let value = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) })
    var sealed = Data()
    let clock = ContinuousClock()
    let sealing = try clock.measure {
        for _ in 0..<runs { sealed = try SecretBox.seal(value, contentType: "text/plain", binding: binding, dataKeyID: "1", dataKey: dataKey) }
    }
    var opened = Data()
    let opening = try clock.measure {
        for _ in 0..<runs { opened = try SecretBox.open(sealed, binding: binding, dataKey: dataKey).value }
    }
    precondition(opened == value)
    let label = String(size).padding(toLength: 8, withPad: " ", startingAt: 0)
    print("\(label)  \(String(format: "%7.2f", microseconds(sealing) / Double(runs)))   \(String(format: "%7.2f", microseconds(opening) / Double(runs)))")
}
