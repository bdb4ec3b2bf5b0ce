import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("Limits")
struct LimitsTests {
    @Test(arguments: [
        "application/json", "text/plain", "text/plain; charset=utf-8", "application/vnd.api+json", "image/svg+xml",
        "application/x-www-form-urlencoded", "multipart/form-data; boundary=abc", "a/b",
    ])
    func validContentTypesPass(contentType: String) throws {
        try Limits.validateContentType(contentType)
    }

    @Test(arguments: [
        "", "json", "/json", "application/", "a/b/c", "text /plain", "text/ plain", "text/plain\n", "text/plain\r\nX-Evil: 1",
        "text/pl@in", "te(x)t/plain", "appl\u{E9}cation/json", "text/plain; charset=\u{E9}", "text/plain\u{0}",
        "application/" + String(repeating: "x", count: 244),
    ])
    func invalidContentTypesAreRejected(contentType: String) throws {
        try expectError(.invalidArgument, field: "contentType", mentioning: ["media type"]) { try Limits.validateContentType(contentType) }
    }

    @Test func contentTypeOf255CharactersIsTheLongest() throws {
        let longest = "application/" + String(repeating: "x", count: 243)
        #expect(longest.count == Limits.maxContentTypeLength)
        try Limits.validateContentType(longest)
    }

    @Test func valueLimitIs256KiB() throws {
        try Limits.validateValue(Data(count: 262_144))
        #expect(throws: DiscfgError(.tooLarge, "value is 262145 bytes; the limit is 262144 bytes (256 KiB)", field: "value")) {
            try Limits.validateValue(Data(count: 262_145))
        }
    }

    @Test(arguments: [Int64(1), 3600, Limits.maxTTLSeconds])
    func ttlWithinRangePasses(seconds: Int64) throws {
        try Limits.validateTTL(seconds: seconds)
    }

    @Test(arguments: [Int64(0), -1, Limits.maxTTLSeconds + 1])
    func ttlOutOfRangeIsInvalid(seconds: Int64) throws {
        try expectError(.invalidArgument, field: "ttl", mentioning: ["\(seconds)"]) { try Limits.validateTTL(seconds: seconds) }
    }

    @Test func pageSizeIsOneToAThousand() throws {
        try Limits.validatePageSize(1)
        try Limits.validatePageSize(1000)
        for limit in [0, -1, 1001] {
            try expectError(.invalidArgument, field: "limit", mentioning: ["\(limit)"]) { try Limits.validatePageSize(limit) }
        }
    }

    @Test func setOptionsValidateTTLAndContentType() throws {
        try SetOptions(ttlSeconds: 1, contentType: "text/plain").validate()
        try expectError(.invalidArgument, field: "ttl") { try SetOptions(ttlSeconds: 0).validate() }
        try expectError(.invalidArgument, field: "contentType") { try SetOptions(contentType: "nope").validate() }
    }
}
