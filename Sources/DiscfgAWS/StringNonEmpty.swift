import Foundation

extension String {
    /// Self, or nil when empty after trimming, because empty variables mean "unset" to AWS tools.
    var nonEmpty: String? {
        let trimmed = trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
