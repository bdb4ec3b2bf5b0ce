import DiscfgCore
import Testing

/// Runs `body` and expects it to throw a ``DiscfgError`` with `code` and, when given, that
/// `field` and a message mentioning every one of `phrases`; returns the error so a test can
/// check more (its current item, say). The one way discfg's tests expect a failure.
@discardableResult
package func expectError<T>(
    _ code: DiscfgError.Code,
    _ comment: Comment? = nil,
    field: String? = nil,
    mentioning phrases: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async -> DiscfgError? {
    let outcome: Result<T, any Error>
    do {
        outcome = .success(try await body())
    } catch {
        outcome = .failure(error)
    }
    return ErrorExpectation(code: code, comment: comment, field: field, phrases: phrases).check(outcome, sourceLocation)
}

/// ``expectError(_:_:field:mentioning:sourceLocation:_:)`` for code that does not suspend.
@discardableResult
package func expectError<T>(
    _ code: DiscfgError.Code,
    _ comment: Comment? = nil,
    field: String? = nil,
    mentioning phrases: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) -> DiscfgError? {
    ErrorExpectation(code: code, comment: comment, field: field, phrases: phrases).check(Result { try body() }, sourceLocation)
}

private struct ErrorExpectation {
    var code: DiscfgError.Code
    var comment: Comment?
    var field: String?
    var phrases: [String]

    func check<T>(_ outcome: Result<T, any Error>, _ sourceLocation: SourceLocation) -> DiscfgError? {
        let expected = "DiscfgError .\(code)\(field.map { " for \($0)" } ?? "")\(comment.map { " (\($0))" } ?? "")"
        switch outcome {
        case .success(let value):
            Issue.record("expected \(expected), got success: \(value)", sourceLocation: sourceLocation)
            return nil
        case .failure(let error as DiscfgError):
            #expect(error.code == code, "\(comment.map { "\($0): " } ?? "")\(error.message)", sourceLocation: sourceLocation)
            if let field { #expect(error.field == field, "\(error.message)", sourceLocation: sourceLocation) }
            for phrase in phrases {
                #expect(error.message.contains(phrase), "message \"\(error.message)\" should mention \"\(phrase)\"", sourceLocation: sourceLocation)
            }
            return error
        case .failure(let error):
            Issue.record("expected \(expected), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}
