extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object written as a literal, members in the order written:
    /// `["targetingKey": "u1", "plan": "pro"]`.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }
}
