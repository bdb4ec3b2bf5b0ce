import ArgumentParser
import DiscfgCore

/// `-m/--message`, on every command that changes keys: why, recorded with the change
/// beside who made it.
struct ChangeOptions: ParsableArguments {
    @Option(
        name: [.customShort("m"), .customLong("message")],
        help: ArgumentHelp(
            "Why: recorded with the change, beside who made it; shown by 'history' and 'log' (at most 1 KiB).",
            valueName: "TEXT"
        )
    )
    var message: String?

    /// Runs `body` with its changes attributed: to this machine's user and host on a
    /// store the command opens itself; a server records the caller it authenticated
    /// instead, and only the message travels to it.
    /// - Parameter documented: a message the command's input gave (a `txn` or `import`
    ///   document's `message`), used when `-m` is not given.
    func attributed<T>(documented: String? = nil, _ body: () async throws -> T) async throws -> T {
        let message = message ?? documented
        if let message { try Attribution.validate(message: message) }
        return try await Attribution(principal: .localUser(), message: message).withValue(operation: body)
    }
}
