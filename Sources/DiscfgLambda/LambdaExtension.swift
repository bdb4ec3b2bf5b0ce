import AsyncHTTPClient
import DiscfgCore
import Foundation
import Logging

/// What an external extension does in each phase of a Lambda execution environment.
///
/// The extension loop calls ``load()`` once before it first asks for an event (so it
/// finishes before the function's first invoke), ``refreshInBackground()`` on each
/// INVOKE, and ``shutdown()`` on SHUTDOWN.
public protocol ExtensionWorkload: Sendable {
    /// Gets ready to serve: everything loaded, from its source or a cache.
    ///
    /// - Throws: When it cannot serve at all; the loop reports it as the init error.
    func load() async throws

    /// Starts a refresh if one is due and none is running, without waiting for it.
    func refreshInBackground() async

    /// Stops serving and refreshing; bounded by the SHUTDOWN event's deadline.
    func shutdown() async
}

/// The loop of an external Lambda extension over the Extensions API: register, load,
/// then take events until SHUTDOWN, never holding an invoke up.
///
/// ```swift
/// let status = await LambdaExtension.run(name: "discfg-agent", environment: env) { logger in
///     try MyWorkload(environment: env, logger: logger)
/// }
/// ```
public enum LambdaExtension {
    /// The error type of an init error whose workload could not load.
    public static let initErrorType = "Extension.discfg.InitError"
    /// The error type of an exit error: the Extensions API failed under the extension.
    public static let exitErrorType = "Extension.discfg.ExitError"

    /// Registers as `name`, makes and loads the workload, and runs until SHUTDOWN.
    ///
    /// - Parameters:
    ///   - name: The extension's file name under `/opt/extensions`, sent at registration.
    ///   - environment: The process environment; `AWS_LAMBDA_RUNTIME_API` and
    ///     `DISCFG_LOG_LEVEL` are read here.
    ///   - make: Builds the workload; an error is reported as the init error.
    /// - Returns: The exit status: 0 after SHUTDOWN, 1 when loading or the API failed,
    ///   2 outside Lambda.
    public static func run(
        name: String, environment: [String: String], make: @Sendable (Logger) async throws -> any ExtensionWorkload
    ) async -> Int32 {
        let level = environment["DISCFG_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        let logger = Logger(label: name) { _ in LambdaLogHandler(level: level) }
        guard let address = environment["AWS_LAMBDA_RUNTIME_API"], !address.isEmpty else {
            FileHandle.standardError.write(Data("""
            discfg: AWS_LAMBDA_RUNTIME_API is not set: '\(name)' runs inside AWS Lambda as an extension (a layer's extensions/\(name)).
            See docs/aws.md; use 'discfg agent' to run the agent anywhere else.\n
            """.utf8))
            return 2
        }
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(timeout: .init(connect: .seconds(5))))
        let status = await loop(name: name, address: address, http: http, logger: logger, make: make)
        try? await http.shutdown()
        return status
    }

    private static func loop(
        name: String, address: String, http: HTTPClient, logger: Logger, make: @Sendable (Logger) async throws -> any ExtensionWorkload
    ) async -> Int32 {
        let api: ExtensionsAPIClient
        do {
            api = try await ExtensionsAPIClient.register(name: name, address: address, http: http)
        } catch {
            logger.critical("cannot register with the Extensions API: \(error)")
            return 1
        }
        let workload: any ExtensionWorkload
        do {
            workload = try await make(logger)
            try await workload.load()
        } catch {
            let failure = LambdaFailure(type: initErrorType, message: LambdaRuntime.describe(error))
            logger.critical("cannot start: \(failure.message)")
            do { try await api.failInit(failure) } catch { logger.critical("cannot report the init error: \(error)") }
            return 1
        }
        while true {
            let event: ExtensionEvent
            do {
                event = try await api.next()
            } catch {
                logger.critical("the Extensions API failed: \(error)")
                try? await api.failExit(LambdaFailure(type: exitErrorType, message: "\(error)"))
                await workload.shutdown()
                return 1
            }
            switch event {
            case .invoke:
                // The next event/next goes out at once: a refresh never holds the invoke up.
                Task { await workload.refreshInBackground() }
            case .shutdown(let reason, let deadline):
                logger.info("shutting down (\(reason))")
                await shutdown(workload, before: deadline)
                return 0
            }
        }
    }

    /// Runs the workload's shutdown, giving up on it 100 ms before Lambda's deadline
    /// (an unstructured task, so a shutdown that hangs cannot hold the exit up).
    private static func shutdown(_ workload: any ExtensionWorkload, before deadline: Date) async {
        let milliseconds = Int64(min(max(0, deadline.timeIntervalSinceNow - 0.1), 60) * 1000)
        let (finished, signal) = AsyncStream<Void>.makeStream()
        Task {
            await workload.shutdown()
            signal.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(milliseconds))
            signal.finish()
        }
        for await _ in finished {}
        timer.cancel()
    }
}
