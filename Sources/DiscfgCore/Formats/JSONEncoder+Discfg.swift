import Foundation

extension JSONEncoder {
    /// The encoder for discfg's JSON: ISO 8601 dates with milliseconds, readable slashes.
    public static func discfg(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(TimestampFormat.string(from: date))
        }
        return encoder
    }
}

extension JSONDecoder {
    /// The decoder for discfg's JSON.
    public static func discfg() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = TimestampFormat.date(from: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not an ISO 8601 time such as 2026-01-31T12:00:00Z")
            }
            return date
        }
        return decoder
    }
}
