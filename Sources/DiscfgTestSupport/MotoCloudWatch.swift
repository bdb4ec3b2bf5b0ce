import DiscfgAWS
import Foundation

/// CloudWatch on the shared moto server (moto serves every service on one port): a
/// reader of alarms, and the calls that make alarms and set their state, which discfg
/// itself never makes, signed through discfg's own JSON client.
public enum MotoCloudWatch {
    /// A client of `moto`'s CloudWatch with quick retries.
    public static func alarms(_ moto: MotoServer, credentials: any CredentialProvider = MotoS3.credentials) -> CloudWatchAlarms {
        CloudWatchAlarms(
            configuration: .init(region: "us-east-1", endpoint: moto.endpoint,
                                 retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(2), maxDelay: .milliseconds(20))),
            credentialProvider: credentials
        )
    }

    /// A fresh alarm name.
    public static func uniqueName(_ stem: String = "discfg") -> String {
        "\(stem)-\(UUID().uuidString.lowercased().prefix(13))"
    }

    /// Creates a metric alarm named `name` on `moto` (in `OK`, as moto starts them).
    public static func createAlarm(_ name: String, on moto: MotoServer) async throws {
        try await call("PutMetricAlarm", [
            "AlarmName": name, "MetricName": "Errors", "Namespace": "discfg/tests", "Statistic": "Sum",
            "Period": 60, "EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold",
        ], on: moto)
    }

    /// Sets `name`'s state as `SetAlarmState` does (`OK`, `ALARM`, `INSUFFICIENT_DATA`).
    public static func setState(_ name: String, _ value: String, reason: String, on moto: MotoServer) async throws {
        try await call("SetAlarmState", ["AlarmName": name, "StateValue": value, "StateReason": reason], on: moto)
    }

    private static func call(_ operation: String, _ input: [String: any Sendable], on moto: MotoServer) async throws {
        let client = AWSJSONClient(
            configuration: .init(region: "us-east-1", service: "monitoring", targetPrefix: "GraniteServiceVersion20100801", endpoint: moto.endpoint),
            credentialProvider: MotoS3.credentials
        )
        do {
            _ = try await client.send(operation: operation, body: try JSONSerialization.data(withJSONObject: input))
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
