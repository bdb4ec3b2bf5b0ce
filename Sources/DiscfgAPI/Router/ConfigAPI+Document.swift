import DiscfgAPIAssets

extension ConfigAPI {
    /// The OpenAPI document describing every route, served at `/openapi.yaml`: the text of
    /// `docs/openapi.yaml`, embedded by `scripts/embed-openapi` in `DiscfgAPIAssets`.
    public static var openAPIDocument: String { OpenAPIDocument.yaml }
}
