import Foundation

/// Credentials from the shared files for the selected profile (`AWS_PROFILE` or `default`).
public struct SharedFileCredentialProvider: CredentialProvider {
    /// The environment used for the profile name, file paths and `HOME`.
    public let environment: [String: String]
    /// An explicit profile name that overrides `AWS_PROFILE`.
    public let explicitProfile: String?

    /// Creates a provider; `profile` overrides `AWS_PROFILE` when given.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, profile: String? = nil) {
        self.environment = environment
        self.explicitProfile = profile
    }

    /// The profile this provider reads.
    public var profileName: String { explicitProfile ?? SharedConfigFiles.profileName(environment: environment) }

    /// The name shown in error reports.
    public var name: String { "shared config files (profile \(profileName))" }

    /// Reads the files now, so edits between calls are picked up.
    public func credentials() async throws -> AWSCredentials {
        let files = SharedConfigFiles(environment: environment)
        let profile = profileName
        let selectedExplicitly = explicitProfile != nil || environment["AWS_PROFILE"].flatMap(\.nonEmpty) != nil
        guard let settings = files.profile(profile) else {
            throw CredentialProviderError(
                selectedExplicitly ? .failed : .notConfigured,
                "profile '\(profile)' not found in \(files.credentialsPath) or \(files.configPath)"
            )
        }
        let key = settings["aws_access_key_id"].flatMap(\.nonEmpty)
        let secret = settings["aws_secret_access_key"].flatMap(\.nonEmpty)
        guard let key, let secret else {
            var hint = ""
            if settings["role_arn"] != nil || settings["sso_session"] != nil || settings["sso_start_url"] != nil
                || settings["credential_process"] != nil {
                hint = " (role, SSO and credential_process profiles are not supported; export keys instead)"
            }
            throw CredentialProviderError(
                .failed,
                "profile '\(profile)' has no aws_access_key_id/aws_secret_access_key\(hint)"
            )
        }
        return AWSCredentials(
            accessKeyID: key,
            secretAccessKey: secret,
            sessionToken: settings["aws_session_token"].flatMap(\.nonEmpty)
        )
    }
}
