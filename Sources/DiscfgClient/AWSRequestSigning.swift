import DiscfgAWS
import Foundation

/// Signs API requests with AWS SigV4, for a discfg API behind API Gateway with IAM
/// auth (service `execute-api`) or a Lambda Function URL with IAM auth (service `lambda`).
public struct AWSRequestSigning: Sendable {
    /// The signer, naming region and service.
    public let signer: SigV4Signer
    /// Where credentials come from (usually the AWS CLI's chain).
    public let credentials: any CredentialProvider

    public init(region: String, service: String, credentials: any CredentialProvider) {
        signer = SigV4Signer(region: region, service: service)
        self.credentials = credentials
    }

    /// Where and how to sign for a server URL, if it needs SigV4: API Gateway
    /// (`ID.execute-api.REGION.amazonaws.com`), a Function URL (`ID.lambda-url.REGION.on.aws`),
    /// or any host with `?sigv4=REGION` (a custom domain; `&sigv4service=` overrides
    /// `execute-api`). The URL comes back without those query items.
    public static func target(for url: URL) -> (url: URL, region: String, service: String)? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let items = components.queryItems ?? []
        let explicitRegion = items.first { $0.name == "sigv4" }?.value
        let explicitService = items.first { $0.name == "sigv4service" }?.value
        let rest = items.filter { $0.name != "sigv4" && $0.name != "sigv4service" }
        components.queryItems = rest.isEmpty ? nil : rest
        let stripped = components.url ?? url
        if let region = explicitRegion, !region.isEmpty {
            return (stripped, region, explicitService ?? "execute-api")
        }
        let labels = (url.host ?? "").lowercased().split(separator: ".").map(String.init)
        if labels.count >= 5, labels[1] == "execute-api", labels[3] == "amazonaws" {
            return (stripped, labels[2], "execute-api")
        }
        if labels.count == 5, labels[1] == "lambda-url", labels[3] == "on", labels[4] == "aws" {
            return (stripped, labels[2], "lambda")
        }
        return nil
    }
}
