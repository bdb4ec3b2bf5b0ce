import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// An env export is held whole before it is answered (it may be refused), so it is
/// answered only up to what an import reads; json and yaml stream at any size.
@Suite("API: env exports are bounded")
struct EnvExportBoundTests {
    @Test("an env export of more than 16 MiB is refused with 413 before anything is written; json streams it")
    func envExportBounded() async throws {
        try await withServer(try await LiveServer.start()) { server in
            #expect(try await server.put("/v1/big", "").status == 201)
            let value = String(repeating: "v", count: Limits.maxValueBytes)
            for index in 0..<70 { #expect(try await server.put("/v1/big/keys/k\(index + 100)", value).status == 201) }
            let env = try await server.get("/v1/big/export?format=env")
            #expect(env.status == 413, "\(env.status), \(env.body.count) bytes")
            #expect(try env.envelope().error?.code == .tooLarge)
            #expect(env.text.contains("json or yaml"), "\(env.text.prefix(300))")
            let json = try await server.get("/v1/big/export?format=json")
            #expect(json.status == 200 && json.body.count > 70 * Limits.maxValueBytes)

            #expect(try await server.put("/v1/small", "").status == 201)
            #expect(try await server.put("/v1/small/keys/db/host", "db1").status == 201)
            let small = try await server.get("/v1/small/export?format=env")
            #expect(small.status == 200 && small.text.contains("DB_HOST"), "\(small.text)")
        }
    }

    @Test("an env export refuses keys that would set a start-up variable (PATH, LD_PRELOAD, BASH_ENV) unless allowEnv names each; json keeps them")
    func envExportRefusesStartupVariables() async throws {
        try await withServer(try await LiveServer.start()) { server in
            #expect(try await server.put("/v1/app", "").status == 201)
            #expect(try await server.put("/v1/app/keys/db/host", "db1").status == 201)
            #expect(try await server.put("/v1/app/keys/path", "/tmp/evil:/usr/bin").status == 201)
            #expect(try await server.put("/v1/app/keys/ld_preload", "/tmp/evil.so").status == 201)

            let refused = try await server.get("/v1/app/export?format=env")
            #expect(refused.status == 400, "\(refused.status) \(refused.text)")
            let error = try #require(try refused.envelope().error)
            #expect(error.code == .invalidArgument && error.field == "allowEnv")
            #expect(error.message.contains("/ld_preload") && error.message.contains("LD_PRELOAD") && error.message.contains("allowEnv=LD_PRELOAD"), "\(error.message)")

            let onePassed = try await server.get("/v1/app/export?format=env&allowEnv=LD_PRELOAD")
            #expect(onePassed.status == 400 && onePassed.text.contains("PATH"), "the other name is still refused: \(onePassed.text)")

            let allowed = try await server.get("/v1/app/export?format=env&allowEnv=LD_PRELOAD&allowEnv=PATH")
            #expect(allowed.status == 200, "\(allowed.text)")
            #expect(allowed.text.contains("PATH=") && allowed.text.contains("LD_PRELOAD=") && allowed.text.contains("DB_HOST="), "\(allowed.text)")

            let json = try await server.get("/v1/app/export?format=json")
            #expect(json.status == 200 && json.text.contains("/ld_preload"), "json is not sourced by a shell: nothing refused")
        }
    }
}
