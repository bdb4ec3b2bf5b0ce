import Hummingbird

/// A Hummingbird application serving `router` on a free loopback port, for the peers the
/// tests stand up (the Lambda Runtime API, a webhook receiver, an OTLP collector).
public enum LoopbackApplication {
    /// Starts the application and returns its port and the task serving it; cancel the
    /// task to stop it.
    ///
    /// - Parameter name: The server's name, also used in the error when it does not start.
    /// - Throws: ``RuntimeAPIEmulator/Failure`` when the server does not start, with why.
    public static func start(_ router: Router<BasicRequestContext>, name: String) async throws -> (port: Int, server: Task<Void, any Error>) {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: name),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            }
        )
        // Quiet: the server's own start and stop messages are not the tests' output.
        app.logger.logLevel = .critical
        let server = Task { [app] in
            defer { portContinuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            server.cancel()
            let outcome = await server.result
            throw RuntimeAPIEmulator.Failure(description: "\(name) did not start: \(outcome)")
        }
        return (port, server)
    }
}
