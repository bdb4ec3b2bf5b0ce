import DiscfgJSON

/// Why a flag set document was refused: where (a JSON Pointer into the document) and why.
///
/// ```swift
/// do { _ = try FlagSet(parsing: document) } catch { print(error.pointer, error.message) }
/// ```
public struct FlagSetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The offending member, as a JSON Pointer into the flag set (`/flags/new-ui/state`).
    public let pointer: String
    /// What is wrong, in a sentence a person can act on.
    public let message: String

    /// An error at `pointer`.
    public init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    init(_ path: [String], _ message: String) {
        self.init(pointer: JSONPointer(tokens: path).description, message: message)
    }

    /// "`/flags/x/state`: …".
    public var description: String { "\(pointer.isEmpty ? "(root)" : pointer): \(message)" }
}
