/// One expectation of a conformance check that did not hold: what was wrong, and the line
/// of the check that expected otherwise.
public struct ExpectationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was expected and what was found, values included.
    public var message: String
    /// The file of the expectation, as `Module/File.swift`.
    public var fileID: String
    /// The line of the expectation.
    public var line: Int

    /// A failure at `fileID`:`line` saying `message`.
    public init(_ message: String, fileID: String, line: Int) {
        self.message = message
        self.fileID = fileID
        self.line = line
    }

    /// `Module/File.swift:LINE: message`.
    public var description: String { "\(fileID):\(line): \(message)" }
}

extension StoreConformance {
    /// What one check found wrong with a store: every expectation that failed, in the
    /// order they failed. A check throws it when it ends with any failure, so whatever
    /// runs the check — a Swift Testing or XCTest test, a plain program — sees the failure
    /// as the error the check threw.
    public struct CheckFailure: Error, Sendable, CustomStringConvertible {
        /// The store's name (``StoreConformance/name``).
        public var store: String
        /// The failed expectations, first failure first; never empty.
        public var expectations: [ExpectationFailure]

        /// The failures of one check on `store`.
        public init(store: String, expectations: [ExpectationFailure]) {
            self.store = store
            self.expectations = expectations
        }

        /// A headline naming the store, then one `File.swift:LINE: message` line per
        /// failed expectation.
        public var description: String {
            let count = expectations.count == 1 ? "1 expectation" : "\(expectations.count) expectations"
            return "\(count) failed on store \(store):\n" + expectations.map { "  \($0)" }.joined(separator: "\n")
        }
    }
}
