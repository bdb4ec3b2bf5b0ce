import DiscfgNetwork
@testable import DiscfgAPI
import DiscfgCore
import Hummingbird
import Logging
import Testing

/// What a caller reads in an error names the problem, never the server's files,
/// tables, ARNs or a library's error dump; those go to the server's log.
@Suite("API: errors show callers the problem, not the server's insides")
struct ErrorExposureTests {
    @Test("store and internal failures are told in general terms; the caller's own mistakes in full")
    func sanitized() {
        let logger = Logger(label: "test")
        let leaks = [
            DiscfgError(.unavailable, "cannot open SQLite store /var/lib/discfg/discfg.db: disk I/O error", field: "store"),
            DiscfgError(.unavailable, "DynamoDB GetItem on table arn:aws:dynamodb:eu-west-1:123456789012:table/discfg failed: ResourceNotFound"),
            DiscfgError(.internal, "Foundation.NSError Domain=NSCocoaErrorDomain Code=4 \"/home/ops/x\""),
            DiscfgError(.throttled, "DynamoDB TransactWriteItems on table discfg failed: ProvisionedThroughputExceededException", field: "credentials"),
        ]
        for error in leaks {
            let shown = FailurePolicy.shown(error, logger: logger)
            #expect(shown.code == error.code)
            for secret in ["/var/lib", "arn:aws", "123456789012", "NSError", "/home/ops", "discfg.db", "table"] {
                #expect(!shown.message.contains(secret), "\(shown.message)")
            }
            #expect(shown.field != "store" && shown.field != "credentials")
        }
        let mine = DiscfgError.invalid("key", "key \"a//b\" has an empty segment (\"//\")")
        #expect(FailurePolicy.shown(mine, logger: logger) == mine)
        let timeout = DiscfgError(.unavailable, "the request took longer than 30 seconds and was abandoned before anything was changed", field: "timeout")
        #expect(FailurePolicy.shown(timeout, logger: logger) == timeout)
    }
}
