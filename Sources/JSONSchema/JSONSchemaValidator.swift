import DiscfgJSON

/// A JSON Schema (draft 2020-12 or draft 7) ready to validate instances.
///
/// The dialect comes from the root's `$schema` (draft 2020-12 when absent or unknown).
/// References resolve within the schema's own resources and the `registry` passed in; a
/// reference to anything else is a validation error naming the URI, and is never fetched.
/// Formats are asserted (see ``FormatChecker`` for the list); unknown formats pass.
///
/// Evaluation is bounded: subschema nesting by ``Options/maxDepth`` (so `{"$ref": "#"}` on a
/// deep instance ends with an error, not a stack overflow) and regular expressions by
/// ``Options/regexSteps`` for the whole validation.
///
/// ```swift
/// let validator = try JSONSchemaValidator(schema: JSONParser.parse(#"{"type": "integer", "maximum": 65535}"#))
/// let result = validator.validate(70000)
/// result.errors.first?.message   // "must be ≤ 65535"
/// ```
public struct JSONSchemaValidator: Sendable {
    /// Limits and choices of a validator.
    public struct Options: Sendable {
        /// The dialect when the root has no `$schema` the validator knows (default 2020-12).
        public var defaultDraft: SchemaDraft
        /// Whether `format` is an assertion (default true) or only an annotation.
        public var assertFormats: Bool
        /// Deepest nesting of subschema evaluations (each `$ref` and applicator counts one).
        public var maxDepth: Int
        /// Regex matching steps allowed for one whole validation.
        public var regexSteps: Int
        /// Subschema evaluations allowed for one whole validation: depth alone does not bound
        /// `{"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}`, which branches twice per level.
        public var maxEvaluations: Int
        /// Most subschemas the schema and registry may hold together.
        public var maxSubschemas: Int
        /// Most errors reported by one validation (the count still says whether it failed).
        public var maxErrors: Int

        /// The defaults: draft 2020-12, formats asserted, depth 400, 10 million regex steps,
        /// a million subschema evaluations, 100,000 subschemas, 100 errors.
        public init(
            defaultDraft: SchemaDraft = .draft2020_12,
            assertFormats: Bool = true,
            maxDepth: Int = 400,
            regexSteps: Int = 10_000_000,
            maxEvaluations: Int = 1_000_000,
            maxSubschemas: Int = 100_000,
            maxErrors: Int = 100
        ) {
            self.defaultDraft = defaultDraft
            self.assertFormats = assertFormats
            self.maxDepth = maxDepth
            self.regexSteps = regexSteps
            self.maxEvaluations = maxEvaluations
            self.maxSubschemas = maxSubschemas
            self.maxErrors = maxErrors
        }
    }

    /// The dialect of the root schema.
    public let draft: SchemaDraft
    /// The limits this validator runs with.
    public let options: Options
    /// Every subschema the root reaches, its keywords read once.
    let compiled: CompiledSchema
    /// The base URI of the root resource.
    let rootBase: String
    /// Whether some schema uses `unevaluatedProperties`/`unevaluatedItems`, which need the
    /// annotations of what was evaluated.
    let tracksAnnotations: Bool

    private static func metaschemaUsesValidation(_ schema: JSONValue, draft: SchemaDraft, index: SchemaIndex) -> Bool {
        guard draft == .draft2020_12, case .string(let uri)? = schema["$schema"],
            case .object(let vocabularies)? = index.resolve(SchemaIndex.stripFragment(uri))?.value["$vocabulary"]
        else { return true }
        return vocabularies.contains("https://json-schema.org/draft/2020-12/vocab/validation")
    }

    /// Builds a validator.
    /// - Parameters:
    ///   - schema: the root schema.
    ///   - registry: other schema documents by absolute URI, for `$ref`s that name them.
    ///   - options: dialect default, format assertion and limits.
    /// - Throws: ``SchemaError`` when the schema is not usable: an invalid `pattern`, too many
    ///   subschemas, or nesting past the limit.
    ///
    /// Building reads every keyword of every subschema the root reaches once (see ``SchemaNode``)
    /// and resolves its references, so build a validator once per schema and keep it: it is
    /// `Sendable`, and each ``validate(_:)`` only walks what was built.
    public init(schema: JSONValue, registry: [String: JSONValue] = [:], options: Options = Options()) throws(SchemaError) {
        var draft = options.defaultDraft
        if case .string(let uri)? = schema["$schema"], let named = SchemaDraft(schemaURI: uri) { draft = named }
        var index = SchemaIndex()
        for (uri, document) in registry.sorted(by: { $0.key < $1.key }) {
            var documentDraft = draft
            if case .string(let uri)? = document["$schema"], let named = SchemaDraft(schemaURI: uri) { documentDraft = named }
            try index.add(document, uri: uri, draft: documentDraft, limit: options.maxSubschemas)
        }
        try index.add(schema, uri: "", draft: draft, limit: options.maxSubschemas)
        index.merge(Metaschemas.index)
        self.draft = draft
        self.options = options
        // The root was just added under "".
        let root = index.resolve("")!
        // When the root's metaschema declares `$vocabulary` without the validation vocabulary,
        // only applicators (and formats) apply.
        let assertsValidation = Self.metaschemaUsesValidation(schema, draft: draft, index: index)
        compiled = try SchemaCompiler.compile(root, index: index, options: options, assertsValidation: assertsValidation)
        rootBase = root.base
        tracksAnnotations = index.usesUnevaluated
    }

    /// Checks `schema` against the metaschema of its dialect (`$schema`, else `defaultDraft`).
    ///
    /// ```swift
    /// JSONSchemaValidator.checkSchema(["type": "strnig"]).isValid   // false
    /// ```
    public static func checkSchema(_ schema: JSONValue, defaultDraft: SchemaDraft = .draft2020_12) -> ValidationResult {
        var draft = defaultDraft
        if case .string(let uri)? = schema["$schema"], let named = SchemaDraft(schemaURI: uri) { draft = named }
        return (draft == .draft7 ? draft7Metaschema : draft2020_12Metaschema).validate(schema)
    }

    // The metaschemas are constants and compile without error; built once, on first use.
    private static let draft7Metaschema = try! JSONSchemaValidator(
        schema: ["$ref": "http://json-schema.org/draft-07/schema#"], options: Options(defaultDraft: .draft7))
    private static let draft2020_12Metaschema = try! JSONSchemaValidator(
        schema: ["$ref": "https://json-schema.org/draft/2020-12/schema"], options: Options(defaultDraft: .draft2020_12))

    /// Validates an instance, reporting every violation found (up to ``Options/maxErrors``).
    public func validate(_ instance: JSONValue) -> ValidationResult {
        var evaluator = Evaluator(validator: self)
        var annotations = Annotations()
        let valid = evaluator.evaluate(compiled.root, instance, &annotations)
        guard evaluator.exhausted else { return ValidationResult(isValid: valid, errors: evaluator.errors) }
        // The budget's error may have been raised inside a `not` or an `anyOf` branch, whose errors
        // are not reported; it is the one that says why validation failed, so it comes first.
        let limit = ValidationError(
            instanceLocation: "", keyword: "", keywordLocation: "", schemaLocation: "\(rootBase)#",
            message: "schema evaluation too expensive: more than \(options.maxEvaluations) subschema evaluations")
        return ValidationResult(isValid: false, errors: [limit] + evaluator.errors.prefix(options.maxErrors - 1))
    }
}

/// A schema the validator cannot use.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the schema.
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { "invalid schema: \(message)" }
}

/// The outcome of one validation.
public struct ValidationResult: Sendable {
    /// Whether the instance is valid.
    public let isValid: Bool
    /// The violations, in the order found; empty when valid.
    public let errors: [ValidationError]
}

/// One violation: where in the instance, which keyword, and a sentence a person can act on.
public struct ValidationError: Sendable, Equatable, CustomStringConvertible {
    /// JSON pointer to the offending value in the instance (`""` for the whole instance).
    public let instanceLocation: String
    /// The keyword that failed, e.g. `maximum`, `required`, `$ref`.
    public let keyword: String
    /// JSON pointer of the keyword along the evaluation path, through `$ref`s (`/properties/port/maximum`).
    public let keywordLocation: String
    /// Absolute location of the keyword: its resource's URI and pointer (`https://x/s.json#/$defs/port/maximum`).
    public let schemaLocation: String
    /// What is wrong, e.g. `must be ≤ 65535`, `"name" is required`.
    public let message: String

    public var description: String {
        "\(instanceLocation.isEmpty ? "(root)" : instanceLocation): \(message)"
    }
}
