import DiscfgDynamoDB
import Foundation

/// A DynamoDB Streams event as Lambda delivers it.
struct DynamoDBStreamEvent: Decodable {
    struct Record: Decodable {
        struct Change: Decodable {
            var NewImage: Attributes?
            var SequenceNumber: String?
        }

        var eventID: String?
        var eventName: String?
        var eventSource: String?
        var dynamodb: Change?
    }

    var Records: [Record]
}

/// The stream handler's answer: the first record to retry from, if any
/// (`ReportBatchItemFailures`).
struct StreamBatchResponse: Encodable, Equatable {
    struct Failure: Encodable, Equatable {
        var itemIdentifier: String
    }

    var batchItemFailures: [Failure]
}
