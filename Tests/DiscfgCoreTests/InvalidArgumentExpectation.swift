import DiscfgCore
import Testing

/// Expects `body` to throw ``DiscfgError`` `invalidArgument` for `field`, with a message
/// that contains every one of `phrases`.
func expectInvalid<T>(
    field: String, mentioning phrases: [String] = [], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) {
    do {
        let value = try body()
        Issue.record("expected invalidArgument for \(field), got \(value)", sourceLocation: sourceLocation)
    } catch let error as DiscfgError {
        #expect(error.code == .invalidArgument, "\(error.message)", sourceLocation: sourceLocation)
        #expect(error.field == field, sourceLocation: sourceLocation)
        for phrase in phrases {
            #expect(error.message.contains(phrase), "message \"\(error.message)\" should mention \"\(phrase)\"", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected DiscfgError, got \(error)", sourceLocation: sourceLocation)
    }
}
