import DiscfgCore
import Testing

/// Runs `body` and expects it to throw a ``DiscfgError`` with `code`; returns the error
/// so a test can check its message, field or current item.
@discardableResult
package func expectError<T>(
    _ code: DiscfgError.Code,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async -> DiscfgError? {
    do {
        let value = try await body()
        Issue.record("expected DiscfgError .\(code)\(comment.map { " (\($0))" } ?? ""), got success: \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as DiscfgError {
        #expect(error.code == code, "\(comment.map { "\($0): " } ?? "")\(error.message)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected DiscfgError .\(code)\(comment.map { " (\($0))" } ?? ""), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
