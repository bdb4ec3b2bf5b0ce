import Foundation
import NIOConcurrencyHelpers

/// A settable clock so credential expiry can be tested without sleeping.
final class TestClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = NIOLockedValueBox(start)
    }

    var now: Date { current.withLockedValue { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLockedValue { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The closure form the library takes.
    var closure: @Sendable () -> Date { { [self] in self.now } }
}

/// A temporary directory removed when the value is released.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "discfg-aws-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Writes `contents` to `name` inside the directory and returns the full path.
    @discardableResult
    func write(_ name: String, _ contents: String) throws -> String {
        let full = path + "/" + name
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: full))
        return full
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// An environment that cannot reach any real credential source: no variables, an empty HOME,
/// and IMDS disabled, so tests never contact the link-local metadata addresses.
func isolatedEnvironment(home: String, _ extra: [String: String] = [:]) -> [String: String] {
    var environment = ["HOME": home, "AWS_EC2_METADATA_DISABLED": "true"]
    environment.merge(extra) { _, new in new }
    return environment
}
