import DiscfgAWS
import DiscfgCore
import Foundation

extension SignalReader {
    /// `error` as one sentence naming the alarms asked for, CloudWatch and what to do.
    static func discfgError(_ error: AWSError, alarms names: [String], endpoint: URL) -> DiscfgError {
        let first = names.first.map { "\"\(String($0.prefix(100)).debugEscaped)\"" } ?? "(none)"
        let subject = "cannot read CloudWatch alarm \(first)" + (names.count > 1 ? " (and \(names.count - 1) more)" : "")
        let said = error.message.isEmpty ? "" : ": \(String(error.message.prefix(200)))"
        let retried = error.retries > 0 ? " after \(error.retries) retr\(error.retries == 1 ? "y" : "ies")" : ""
        let status = error.httpStatus.map { ", HTTP \($0)" } ?? ""
        switch error.code {
        case .authentication:
            return DiscfgError(.permissionDenied, "\(subject): CloudWatch refused the request (\(error.awsCode)\(status))\(said); check the credentials, their expiry and the cloudwatch:DescribeAlarms permission", field: "signals")
        case .throttling:
            return DiscfgError(.throttled, "\(subject): CloudWatch throttled DescribeAlarms (\(error.awsCode)\(status))\(retried)", field: "signals")
        case .network:
            if let failure = error.connectFailure {
                return DiscfgError(.unavailable, "\(subject): \(failure.sentence(service: "CloudWatch"))\(retried)", field: "signals")
            }
            return DiscfgError(.unavailable, "\(subject): the CloudWatch endpoint \(endpoint.absoluteString) did not answer (\(error.message))\(retried)", field: "signals")
        case .serviceUnavailable:
            return DiscfgError(.unavailable, "\(subject): CloudWatch failed (\(error.awsCode)\(status))\(retried)\(said)", field: "signals")
        default:
            if error.awsCode == "MalformedAnswer" || error.awsCode == "TooLarge" {
                return DiscfgError(.unavailable, "\(subject): the CloudWatch endpoint \(endpoint.absoluteString) sent no usable answer: \(error.message)", field: "signals")
            }
            return DiscfgError(.unavailable, "\(subject): CloudWatch refused DescribeAlarms (\(error.awsCode)\(status))\(retried)\(said)", field: "signals")
        }
    }
}
