/// Why a targeting rule could not be evaluated.
enum LogicError: Error, Sendable {
    /// The rule names an operator flagd does not know (flagd: PARSE_ERROR).
    case unknownOperator(String)
    /// The rule nests deeper than ``LogicRun/maxDepth`` (flagd: GENERAL).
    case tooDeep(Int)
    /// The rule built more values than ``LogicRun/maxElements`` (flagd: GENERAL).
    case tooLarge(Int)
    /// An operation failed as the reference's does (division by zero; flagd: GENERAL).
    case failed(String)

    var message: String {
        switch self {
        case .unknownOperator(let name): "unknown operator \"\(name)\" in targeting"
        case .tooDeep(let limit): "targeting nests deeper than \(limit) levels"
        case .tooLarge(let limit): "targeting built more than \(limit) values"
        case .failed(let why): why
        }
    }
}
