import AsyncHTTPClient
import NIOCore

extension HTTPClient {
    /// The connection pool of an AWS client (DynamoDB's JSON protocol, S3): a dead
    /// endpoint is reported within the request `timeout` when that is shorter than 5 s,
    /// and a connection the endpoint refuses fails its request at once (the pool would
    /// otherwise try again until the connect timeout, hiding the refusal): the client
    /// decides how often to try again (``ConnectFailure``).
    static func forAWS(timeout: Duration) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = TimeAmount(min(timeout, .seconds(5)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
