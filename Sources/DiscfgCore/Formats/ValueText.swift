/// How a value's text reads as a number or a truth value: one reading for every place an
/// application reads typed settings (the Swift client, the swift-configuration provider).
/// Surrounding spaces and newlines are ignored, so a value written by `echo` reads the same.
public enum ValueText {
    /// `text` as an integer, or nil when it is not one (or does not fit in `Int`).
    public static func int(_ text: String) -> Int? { Int(trimmed(text)) }

    /// `text` as a floating-point number, or nil when it is not one.
    public static func double(_ text: String) -> Double? { Double(trimmed(text)) }

    /// `text` as a truth value: `true/false`, `yes/no`, `on/off` or `1/0`, in any case.
    public static func bool(_ text: String) -> Bool? {
        switch trimmed(text).lowercased() {
        case "true", "yes", "on", "1": true
        case "false", "no", "off", "0": false
        default: nil
        }
    }

    private static func trimmed(_ text: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return text[first...last]
    }
}
