import DiscfgCore

/// Runs `body` and expects it to throw a ``DiscfgError`` with `code` and, when given, that
/// `field` and a message mentioning every one of `phrases`; returns the error so a test can
/// check more (its current item, say). The one way discfg's tests expect a failure.
/// - Throws: an ``ExpectationFailure`` at the caller's line, saying what `body` did instead
///   (returned, threw something else, or threw a `DiscfgError` that differs); any runner
///   reports it, inside a conformance check or out.
@discardableResult
package func expectError<T>(
    _ code: DiscfgError.Code,
    _ comment: String? = nil,
    field: String? = nil,
    mentioning phrases: [String] = [],
    fileID: String = #fileID,
    line: Int = #line,
    _ body: () async throws -> T
) async throws(ExpectationFailure) -> DiscfgError {
    let outcome: Result<T, any Error>
    do {
        outcome = .success(try await body())
    } catch {
        outcome = .failure(error)
    }
    return try ErrorExpectation(code: code, comment: comment, field: field, phrases: phrases).check(outcome, fileID: fileID, line: line)
}

/// ``expectError(_:_:field:mentioning:fileID:line:_:)`` for code that does not suspend.
@discardableResult
package func expectError<T>(
    _ code: DiscfgError.Code,
    _ comment: String? = nil,
    field: String? = nil,
    mentioning phrases: [String] = [],
    fileID: String = #fileID,
    line: Int = #line,
    _ body: () throws -> T
) throws(ExpectationFailure) -> DiscfgError {
    try ErrorExpectation(code: code, comment: comment, field: field, phrases: phrases).check(Result { try body() }, fileID: fileID, line: line)
}

private struct ErrorExpectation {
    var code: DiscfgError.Code
    var comment: String?
    var field: String?
    var phrases: [String]

    func check<T>(_ outcome: Result<T, any Error>, fileID: String, line: Int) throws(ExpectationFailure) -> DiscfgError {
        let expected = "expected DiscfgError .\(code)\(field.map { " for \($0)" } ?? "")\(comment.map { " (\($0))" } ?? "")"
        switch outcome {
        case .success(let value):
            throw ExpectationFailure("\(expected), got success: \(value)", fileID: fileID, line: line)
        case .failure(let error as DiscfgError):
            var wrong: [String] = []
            if error.code != code { wrong.append("code .\(error.code)") }
            if let field, error.field != field { wrong.append("field \(error.field.map { "\"\($0)\"" } ?? "nil")") }
            for phrase in phrases where !error.message.contains(phrase) {
                wrong.append("a message without \"\(phrase)\"")
            }
            guard wrong.isEmpty else {
                throw ExpectationFailure("\(expected), got \(wrong.joined(separator: ", ")): \(String(reflecting: error.message))", fileID: fileID, line: line)
            }
            return error
        case .failure(let error):
            throw ExpectationFailure("\(expected), got \(type(of: error)): \(error)", fileID: fileID, line: line)
        }
    }
}
