import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing

/// Flag sets under `/flags/` over a live server: a value flagd would refuse, or one that
/// defines a flag key another set defines, is 400 naming the key and the member, and
/// changes nothing.
@Suite("API: flag sets under /flags/ are validated on write")
struct FlagSetRouteTests {
    static let web = #"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}"#

    @Test("PUT of a bad flag set or of a set sharing a flag key is 400 invalidArgument naming the key and pointer; nothing is written")
    func badFlagSetsAreRefused() async throws {
        try await withServer(try await LiveServer.start()) { server in
            _ = try await server.put("/v1/c", "")
            #expect(try await server.put("/v1/c/keys/flags/web", Self.web).status == 201)

            let bad = #"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "maybe"}}}"#
            let refused = try await server.put("/v1/c/keys/flags/web", bad)
            #expect(refused.status == 400, "\(refused.text)")
            let error = try #require(try refused.envelope().error)
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("/flags/web") && error.message.contains("/flags/new-ui/defaultVariant"), "\(error.message)")

            let shared = try await server.put("/v1/c/keys/flags/billing", Self.web)
            #expect(shared.status == 400, "\(shared.text)")
            let sharedMessage = try #require(try shared.envelope().error?.message)
            #expect(sharedMessage.contains("/flags/billing") && sharedMessage.contains("/flags/web") && sharedMessage.contains("\"new-ui\""), "\(sharedMessage)")

            #expect(try await server.get("/v1/c/keys/flags/web?raw").text == Self.web)
            #expect(try await server.get("/v1/c/keys/flags/billing").status == 404)
            #expect(try await server.get("/v1/c").envelope().configInfo?.revision == Revision(1))
        }
    }
}
