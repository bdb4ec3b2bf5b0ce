import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation

/// The flag sets the OFREP tests evaluate: one of each value type, a disabled flag, and
/// flags whose evaluation fails with each of OFREP's error codes.
enum OFREPFixtures {
    static let demo = try! ConfigName("demo")
    static let webKey = try! Key("/flags/web")
    static let opsKey = try! Key("/flags/ops")

    static let web = OFREPFlagSets.web
    static let ops = OFREPFlagSets.ops

    /// Creates `demo` on `server` with both flag sets and a key outside `/flags/`.
    static func seed(_ store: some ConfigStore) async throws {
        _ = try? await store.createConfig(demo, settings: ConfigSettings())
        try await write(web, at: webKey, in: store)
        try await write(ops, at: opsKey, in: store)
        _ = try await store.set(try Key("/app/port"), to: Data("8080".utf8), in: demo, options: SetOptions())
    }

    static func write(_ text: String, at key: Key, in store: some ConfigStore) async throws {
        var options = SetOptions()
        options.contentType = "application/json"
        _ = try await store.set(key, to: Data(text.utf8), in: demo, options: options)
    }

    /// A JSON object's members, for checks.
    static func object(_ data: Data) throws -> JSONObject {
        guard case .object(let object) = try JSONParser.parse(Array(data)) else { throw DiscfgError.invalid("body", "not an object: \(String(decoding: data, as: UTF8.self))") }
        return object
    }
}
