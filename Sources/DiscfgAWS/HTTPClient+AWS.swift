import AsyncHTTPClient
import NIOCore

extension HTTPClient {
    /// The connection pool of an AWS client (DynamoDB's JSON protocol, S3): a dead
    /// endpoint is reported within the request `timeout` when that is shorter than 5 s.
    static func forAWS(timeout: Duration) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = TimeAmount(min(timeout, .seconds(5)))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
