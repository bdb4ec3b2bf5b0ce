import Hummingbird
import ServiceLifecycle

/// A Hummingbird application serving `router` on a free loopback port, for the peers the
/// tests stand up (the Lambda Runtime API, a webhook receiver, an OTLP collector).
public enum LoopbackApplication {
    /// How long a stopping server waits for the requests it is serving before it cancels
    /// them: the peers' long polls are answered when they stop, so this is a bound, not
    /// a wait.
    static let shutdownBound = Duration.seconds(5)

    /// Starts the application and returns its port and the task serving it; cancel the
    /// task to stop it.
    ///
    /// Cancelling shuts the server down gracefully rather than cancelling it: a
    /// connection accepted while a cancelled server stops would be dropped before it is
    /// served, and SwiftNIO traps on that ("Deinited NIOAsyncWriter without calling
    /// finish()"), taking the whole test process down. A graceful shutdown closes the
    /// listener first and serves every connection it accepted.
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
        var configuration = ServiceGroupConfiguration(services: [app], logger: app.logger)
        configuration.maximumGracefulShutdownDuration = shutdownBound
        let group = ServiceGroup(configuration: configuration)
        // Not a child of the task handed out: cancelling that one must not cancel this.
        let running = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        let server = Task {
            await withTaskCancellationHandler {
                _ = await running.result
            } onCancel: {
                Task { await group.triggerGracefulShutdown() }
            }
            try await running.value
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
