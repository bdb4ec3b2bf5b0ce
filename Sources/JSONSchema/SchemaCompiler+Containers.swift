import DiscfgJSON

extension SchemaCompiler {
    /// `properties`, `patternProperties`, `additionalProperties`, `propertyNames`, `required`,
    /// `dependentRequired`, `minProperties`, `maxProperties`, `unevaluatedProperties`.
    mutating func objectKeywords(_ schema: LocatedSchema, _ object: JSONObject) throws(SchemaError) -> ObjectKeywords? {
        var properties: [(name: String, edge: SchemaEdge)]?
        if case .object(let map)? = object["properties"] {
            var list: [(name: String, edge: SchemaEdge)] = []
            for (name, child) in map { list.append((name, try edge(schema, child, .member("properties", name)))) }
            properties = list
        }
        var patternProperties: [(pattern: CompiledPattern, edge: SchemaEdge)]?
        if case .object(let map)? = object["patternProperties"] {
            var list: [(pattern: CompiledPattern, edge: SchemaEdge)] = []
            for (source, child) in map {
                list.append((pattern(source), try edge(schema, child, .member("patternProperties", source))))
            }
            patternProperties = list
        }
        let additionalProperties = try optionalEdge(schema, object["additionalProperties"], "additionalProperties")
        var propertyNames: SchemaEdge?
        if let names = object["propertyNames"] { propertyNames = try edge(schema, names, .keyword("propertyNames")) }
        var required: [String]?
        var dependentRequired: [(name: String, required: [String])]?
        var minProperties: Int?
        var maxProperties: Int?
        if assertsValidation {
            if case .array(let list)? = object["required"] { required = Self.strings(list) }
            if schema.draft == .draft2020_12, case .object(let map)? = object["dependentRequired"] {
                dependentRequired = map.compactMap { name, list in
                    guard case .array(let required) = list else { return nil }
                    return (name, Self.strings(required))
                }
            }
            minProperties = Self.count(object["minProperties"])
            maxProperties = Self.count(object["maxProperties"])
        }
        let unevaluatedProperties = schema.draft == .draft2020_12 ? try optionalEdge(schema, object["unevaluatedProperties"], "unevaluatedProperties") : nil
        guard properties != nil || patternProperties != nil || additionalProperties != nil || propertyNames != nil || required != nil
            || dependentRequired != nil || minProperties != nil || maxProperties != nil || unevaluatedProperties != nil
        else { return nil }
        return ObjectKeywords(
            properties: properties, patternProperties: patternProperties, additionalProperties: additionalProperties, propertyNames: propertyNames,
            required: required, dependentRequired: dependentRequired, minProperties: minProperties, maxProperties: maxProperties,
            unevaluatedProperties: unevaluatedProperties)
    }

    /// `prefixItems`, `items`, `additionalItems`, `contains`, `minContains`, `maxContains`,
    /// `minItems`, `maxItems`, `uniqueItems`, `unevaluatedItems`.
    mutating func arrayKeywords(_ schema: LocatedSchema, _ object: JSONObject) throws(SchemaError) -> ArrayKeywords? {
        var tuple: (keyword: String, edges: [SchemaEdge])?
        var rest: OptionalSubschema?
        switch schema.draft {
        case .draft7:
            if let list = try edges(schema, object["items"], "items") {
                tuple = ("items", list)
                rest = try optionalEdge(schema, object["additionalItems"], "additionalItems")
            } else {
                rest = try optionalEdge(schema, object["items"], "items")
            }
        case .draft2020_12:
            if let list = try edges(schema, object["prefixItems"], "prefixItems") { tuple = ("prefixItems", list) }
            rest = try optionalEdge(schema, object["items"], "items")
        }
        var contains: SchemaEdge?
        if let value = object["contains"] { contains = try edge(schema, value, .keyword("contains")) }
        let readsContainsBounds = schema.draft == .draft2020_12 && assertsValidation
        let minContains = readsContainsBounds ? (Self.count(object["minContains"]) ?? 1) : 1
        let maxContains = readsContainsBounds ? Self.count(object["maxContains"]) : nil
        let minItems = assertsValidation ? Self.count(object["minItems"]) : nil
        let maxItems = assertsValidation ? Self.count(object["maxItems"]) : nil
        let uniqueItems = if assertsValidation, case .bool(true)? = object["uniqueItems"] { true } else { false }
        let unevaluatedItems = schema.draft == .draft2020_12 ? try optionalEdge(schema, object["unevaluatedItems"], "unevaluatedItems") : nil
        guard tuple != nil || rest != nil || contains != nil || minItems != nil || maxItems != nil || uniqueItems || unevaluatedItems != nil else { return nil }
        return ArrayKeywords(
            tuple: tuple, rest: rest, contains: contains, minContains: minContains,
            reportsMinContains: minContains != 1 && object["minContains"] != nil, maxContains: maxContains,
            minItems: minItems, maxItems: maxItems, uniqueItems: uniqueItems, unevaluatedItems: unevaluatedItems)
    }
}
