import DiscfgAWS
import DiscfgCore
import Foundation

extension StoreOpener {
    /// An S3 client with this opener's AWS settings: the same credential chain and region
    /// rules as a `dynamodb://` store, and the endpoint `AWS_ENDPOINT_URL_S3` (then
    /// `AWS_ENDPOINT_URL`) names, if any. Call its `shutdown()` when done.
    ///
    /// - Throws: `invalidArgument` (field `region`) when no region is configured.
    public func openS3(timeout: Duration = .seconds(10)) throws -> S3Client {
        let region: String
        do {
            region = try RegionResolver.resolve(explicit: self.region, environment: environment, profile: profile)
        } catch let error as RegionResolver.NotFound {
            throw DiscfgError.invalid("region", "\(error.description), e.g. --region us-east-1 (S3 signs for its bucket's region)")
        }
        return S3Client(
            configuration: .init(region: region, endpoint: S3Client.Configuration.endpoint(environment: environment), timeout: timeout),
            credentialProvider: CredentialChain.standard(explicit: credentials, environment: environment, profile: profile)
        )
    }
}

extension S3Error {
    /// The error as discfg reports it: a missing bucket or no permission is the caller's
    /// to fix (`invalidArgument` / `permissionDenied`), an endpoint that does not answer
    /// is `unavailable`. The message names the bucket, the key and the action.
    public var discfgError: DiscfgError {
        switch code {
        case .noSuchBucket: DiscfgError(.invalidArgument, description, field: "bucket")
        case .noSuchKey: DiscfgError(.keyNotFound, description)
        case .accessDenied: DiscfgError(.permissionDenied, description)
        case .preconditionFailed: DiscfgError(.conditionFailed, description)
        case .tooLarge: DiscfgError(.tooLarge, description)
        case .throttling: DiscfgError(.throttled, description)
        case .unreachable, .other: DiscfgError(.unavailable, description)
        }
    }
}
