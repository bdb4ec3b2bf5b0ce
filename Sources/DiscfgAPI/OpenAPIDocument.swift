/// The API's OpenAPI document. `docs/openapi.yaml` is this text; a test keeps the two
/// equal and checks that every route is described.
enum OpenAPIDocument {
    static let yaml = """
    openapi: 3.0.3
    """
}
