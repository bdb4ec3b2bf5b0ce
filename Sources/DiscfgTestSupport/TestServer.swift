/// A server a test starts and must have stopped before the test ends.
public protocol TestServer: Sendable {
    /// Stops the server and waits until it has.
    func stop() async
}

/// Runs `body` with `server`, then stops the server and waits for it, whether `body`
/// returned or threw, so no server outlives its test.
///
/// ```swift
/// try await withServer(try await LiveServer.start()) { server in
///     _ = try await server.put("/v1/app", "")
/// }
/// ```
public func withServer<Server: TestServer, Result>(_ server: Server, _ body: (Server) async throws -> Result) async throws -> Result {
    let result: Result
    do {
        result = try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
    return result
}
