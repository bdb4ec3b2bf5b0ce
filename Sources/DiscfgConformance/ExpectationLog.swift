import Synchronization

/// Where the expectations of the running check record their failures. A check installs one
/// for its whole run (``StoreConformance/withStore(fileID:line:_:)``); the expectations
/// below find it through a task-local value, so tasks the check starts record into it too.
///
/// The library cannot use Swift Testing's `#expect`: a release build of any program that
/// links the library would then need the testing library. Its checks record here instead
/// and throw ``StoreConformance/CheckFailure`` at the end, which every test runner reports.
final class ExpectationLog: Sendable {
    /// The log of the check running in this task, if any.
    @TaskLocal static var current: ExpectationLog?

    private let failures = Mutex<[ExpectationFailure]>([])

    /// The failures recorded so far, first first.
    var recorded: [ExpectationFailure] { failures.withLock { $0 } }

    func record(_ failure: ExpectationFailure) {
        failures.withLock { $0.append(failure) }
    }

    /// The log of the running check. An expectation outside a check would be lost, so it
    /// stops the program instead, on its first run whether it holds or not.
    static func running(fileID: String, line: Int) -> ExpectationLog {
        guard let current else {
            preconditionFailure("\(fileID):\(line): an expectation ran outside a conformance check (StoreConformance.withStore)")
        }
        return current
    }
}

/// Records a failure with `message` when `condition` is false.
func expect(_ condition: Bool, _ message: @autoclosure () -> String = "expectation failed", fileID: String = #fileID, line: Int = #line) {
    let log = ExpectationLog.running(fileID: fileID, line: line)
    if !condition { log.record(ExpectationFailure(message(), fileID: fileID, line: line)) }
}

/// Records a failure showing both values when they differ.
func expectEqual<Value: Equatable>(
    _ actual: Value, _ expected: Value, _ comment: @autoclosure () -> String? = nil, fileID: String = #fileID, line: Int = #line
) {
    let log = ExpectationLog.running(fileID: fileID, line: line)
    guard actual != expected else { return }
    let values = "\(String(reflecting: actual)) is not \(String(reflecting: expected))"
    log.record(ExpectationFailure(comment().map { "\($0): \(values)" } ?? values, fileID: fileID, line: line))
}

/// Records a failure showing the value when there is one.
func expectNil<Value>(_ value: Value?, _ comment: @autoclosure () -> String? = nil, fileID: String = #fileID, line: Int = #line) {
    let log = ExpectationLog.running(fileID: fileID, line: line)
    guard let value else { return }
    let found = "expected nil, got \(String(reflecting: value))"
    log.record(ExpectationFailure(comment().map { "\($0): \(found)" } ?? found, fileID: fileID, line: line))
}

/// Records a failure when there is no value.
func expectNotNil<Value>(_ value: Value?, _ comment: @autoclosure () -> String? = nil, fileID: String = #fileID, line: Int = #line) {
    let log = ExpectationLog.running(fileID: fileID, line: line)
    guard value == nil else { return }
    let found = "expected a \(Value.self), got nil"
    log.record(ExpectationFailure(comment().map { "\($0): \(found)" } ?? found, fileID: fileID, line: line))
}

/// Records a failure that no condition describes: a branch that must not be taken.
func fail(_ message: String, fileID: String = #fileID, line: Int = #line) {
    ExpectationLog.running(fileID: fileID, line: line).record(ExpectationFailure(message, fileID: fileID, line: line))
}

/// The value, or a thrown ``ExpectationFailure`` when there is none: for a check that
/// cannot go on without it.
func require<Value>(_ value: Value?, _ comment: @autoclosure () -> String? = nil, fileID: String = #fileID, line: Int = #line) throws(ExpectationFailure) -> Value {
    guard let value else {
        let found = "required a \(Value.self), got nil"
        throw ExpectationFailure(comment().map { "\($0): \(found)" } ?? found, fileID: fileID, line: line)
    }
    return value
}

/// Records a failure showing what the collection holds when it is not empty.
func expectEmpty(_ collection: some Collection, _ comment: @autoclosure () -> String? = nil, fileID: String = #fileID, line: Int = #line) {
    let log = ExpectationLog.running(fileID: fileID, line: line)
    guard !collection.isEmpty else { return }
    let found = "expected nothing, got \(collection.count): \(String(reflecting: Array(collection)))"
    log.record(ExpectationFailure(comment().map { "\($0): \(found)" } ?? found, fileID: fileID, line: line))
}
