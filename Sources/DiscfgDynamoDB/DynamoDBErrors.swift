import DiscfgAWS
import DiscfgCore
import Foundation

/// Turns AWS failures into one-line ``DiscfgError``s: what failed, AWS's error code and a
/// hint (which credential sources were tried, how to create a missing table, how many
/// times a throttled call was retried). An endpoint that could not be connected to is
/// one plain sentence naming it: "the DynamoDB endpoint http://127.0.0.1:8000 refused
/// the connection".
public enum DynamoDBErrors {
    /// Where the failing call went, for the message.
    public struct Context: Sendable {
        /// The table name.
        public var table: String
        /// The region.
        public var region: String
        /// A custom endpoint, if any.
        public var endpoint: URL?

        /// Creates a context.
        public init(table: String, region: String, endpoint: URL?) {
            self.table = table
            self.region = region
            self.endpoint = endpoint
        }

        var place: String {
            "table \"\(table)\" in \(region)" + (endpoint.map { " at \($0.absoluteString)" } ?? "")
        }
    }

    /// The ``DiscfgError`` for a failure of `operation`; a ``DiscfgError`` passes unchanged.
    public static func map(_ error: any Error, operation: String, _ context: Context) -> any Error {
        switch error {
        case let error as DiscfgError:
            return error
        case is CancellationError:
            return error
        case let error as CredentialChainError:
            let tried = error.attempts.map { "\($0.source) (\($0.reason))" }.joined(separator: "; ")
            return DiscfgError(
                .unauthenticated,
                "DynamoDB \(operation) on \(context.place) failed: no AWS credentials found; tried: \(tried) — hint: pass --keyId/--secretKey or --credProfile, set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add a profile to ~/.aws/credentials",
                field: "credentials"
            )
        case let error as AWSError:
            return map(error, operation: operation, context)
        default:
            return DiscfgError(.unavailable, "DynamoDB \(operation) on \(context.place) failed: \(error)")
        }
    }

    static func map(_ error: AWSError, operation: String, _ context: Context) -> DiscfgError {
        if let failure = error.connectFailure {
            // The endpoint is the whole story: no table was reached, and AWS said nothing.
            return DiscfgError(.unavailable, failure.sentence(service: "DynamoDB"), field: "store")
        }
        let line = "DynamoDB \(operation) on \(context.place) failed: \(error.description)"
        switch error.code {
        case .resourceNotFound:
            return tableMissing(context, awsCode: error.awsCode)
        case .throttling:
            return DiscfgError(.throttled, line)
        case .authentication:
            let denied = ["AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "NotAuthorized"].contains(error.awsCode)
            return DiscfgError(denied ? .permissionDenied : .unauthenticated, line, field: "credentials")
        case .network, .serviceUnavailable, .other:
            return DiscfgError(.unavailable, line)
        case .validation where error.message.localizedCaseInsensitiveContains("size"):
            // The caller's to hear, so in the caller's terms: no table, endpoint or AWS text.
            return itemTooLarge(nil)
        case .validation, .conditionalCheckFailed, .transactionCanceled:
            return DiscfgError(.internal, line)
        }
    }

    /// DynamoDB refused an item of a change for its size: an item past 400 KB, or a key
    /// past what its sort keys hold. The caller learns which key (when one key was
    /// changed) and the limits, never the table; nothing was written.
    public static func itemTooLarge(_ key: Key?) -> DiscfgError {
        let subject = key.map { "key \"\($0.path)\" makes an item" } ?? "this change makes an item"
        return DiscfgError(
            .tooLarge,
            "\(subject) larger than DynamoDB stores (400 KB an item, 1,024 bytes of key in a sort key); nothing was written",
            field: key == nil ? "change" : "key"
        )
    }

    /// The error for an operation on a table that does not exist.
    public static func tableMissing(_ context: Context, awsCode: String = "ResourceNotFoundException") -> DiscfgError {
        DiscfgError(
            .unavailable,
            "DynamoDB \(context.place) does not exist (\(awsCode)) — hint: create it with `discfg init`, or create a config with `discfg create NAME`, which creates the table",
            field: "table"
        )
    }
}
