import DiscfgAWS
import Foundation
import Testing

@Suite("Credential sources")
struct CredentialProviderTests {
    // MARK: Environment

    @Test func environmentProvidesKeysAndToken() async throws {
        let provider = EnvironmentCredentialProvider(environment: [
            "AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_SESSION_TOKEN": "envtoken",
        ])
        let credentials = try await provider.credentials()
        #expect(credentials == AWSCredentials(accessKeyID: "AKIAENV", secretAccessKey: "envsecret", sessionToken: "envtoken"))
        #expect(!credentials.description.contains("envsecret"))
        #expect(!credentials.description.contains("envtoken"))
    }

    @Test func environmentExplainsWhatIsMissing() async throws {
        await #expect { try await EnvironmentCredentialProvider(environment: [:]).credentials() } throws: {
            ($0 as? CredentialProviderError)?.kind == .notConfigured
        }
        let error = await #expect(throws: CredentialProviderError.self) {
            try await EnvironmentCredentialProvider(environment: ["AWS_ACCESS_KEY_ID": "AKIA"]).credentials()
        }
        #expect(error?.reason.contains("AWS_SECRET_ACCESS_KEY") == true)
        #expect(error?.kind == .failed)
    }

    // MARK: Shared files

    static let credentialsFile = """
        # discfg test credentials
        [default]
        aws_access_key_id = AKIADEFAULT
        aws_secret_access_key = defaultsecret

        [work]
        aws_access_key_id=AKIAWORK
        aws_secret_access_key=worksecret ; inline comment
        aws_session_token = worktoken
        """

    static let configFile = """
        [default]
        region = eu-west-1

        [profile work]
        region = us-west-2
        aws_access_key_id = AKIACONFIGWORK
        s3 =
          max_concurrent_requests = 10

        [profile onlyconfig]
        aws_access_key_id = AKIACONFIG
        aws_secret_access_key = configsecret

        [profile assumer]
        role_arn = arn:aws:iam::123456789012:role/discfg
        source_profile = default

        [sso-session corp]
        sso_region = us-east-1
        """

    func filesEnvironment(_ directory: TemporaryDirectory, _ extra: [String: String] = [:]) throws -> [String: String] {
        try directory.write(".aws/credentials", Self.credentialsFile)
        try directory.write(".aws/config", Self.configFile)
        return isolatedEnvironment(home: directory.path, extra)
    }

    @Test func defaultProfileFromHomeDirectory() async throws {
        let directory = try TemporaryDirectory()
        let environment = try filesEnvironment(directory)
        let credentials = try await SharedFileCredentialProvider(environment: environment).credentials()
        #expect(credentials == AWSCredentials(accessKeyID: "AKIADEFAULT", secretAccessKey: "defaultsecret"))
    }

    @Test func awsProfileSelectsNamedProfileAndCredentialsFileWins() async throws {
        let directory = try TemporaryDirectory()
        let environment = try filesEnvironment(directory, ["AWS_PROFILE": "work"])
        let credentials = try await SharedFileCredentialProvider(environment: environment).credentials()
        // The config file also names a key for `work`; the credentials file takes precedence.
        #expect(credentials == AWSCredentials(accessKeyID: "AKIAWORK", secretAccessKey: "worksecret", sessionToken: "worktoken"))
    }

    @Test func profileOnlyInConfigFileUsesProfilePrefix() async throws {
        let directory = try TemporaryDirectory()
        let environment = try filesEnvironment(directory)
        let credentials = try await SharedFileCredentialProvider(environment: environment, profile: "onlyconfig").credentials()
        #expect(credentials.accessKeyID == "AKIACONFIG")
        #expect(credentials.secretAccessKey == "configsecret")
    }

    @Test func pathsOverriddenByEnvironment() async throws {
        let directory = try TemporaryDirectory()
        let credentialsPath = try directory.write("elsewhere/creds.ini", "[default]\naws_access_key_id=AKIAOVERRIDE\naws_secret_access_key=s\n")
        let configPath = try directory.write("elsewhere/conf.ini", "[default]\nregion=ap-south-1\n")
        let environment = isolatedEnvironment(home: directory.path, [
            "AWS_SHARED_CREDENTIALS_FILE": credentialsPath, "AWS_CONFIG_FILE": configPath,
        ])
        let credentials = try await SharedFileCredentialProvider(environment: environment).credentials()
        #expect(credentials.accessKeyID == "AKIAOVERRIDE")
        #expect(try RegionResolver.resolve(environment: environment) == "ap-south-1")
    }

    @Test func missingProfileIsAClearError() async throws {
        let directory = try TemporaryDirectory()
        let environment = try filesEnvironment(directory, ["AWS_PROFILE": "nope"])
        let error = await #expect(throws: CredentialProviderError.self) {
            try await SharedFileCredentialProvider(environment: environment).credentials()
        }
        #expect(error?.reason.contains("profile 'nope' not found") == true)
        #expect(error?.reason.contains(directory.path + "/.aws/credentials") == true)
        #expect(error?.kind == .failed)
    }

    @Test func roleProfileExplainsItIsUnsupported() async throws {
        let directory = try TemporaryDirectory()
        let environment = try filesEnvironment(directory)
        let error = await #expect(throws: CredentialProviderError.self) {
            try await SharedFileCredentialProvider(environment: environment, profile: "assumer").credentials()
        }
        #expect(error?.reason.contains("not supported") == true)
    }

    @Test func iniParserHandlesCommentsSectionsAndSubKeys() {
        let files = SharedConfigFiles(environment: ["HOME": "/nonexistent-discfg-home"])
        #expect(files.credentialsProfiles.isEmpty)
        #expect(files.configPath == "/nonexistent-discfg-home/.aws/config")
    }

    // MARK: Region

    @Test func regionPrecedence() throws {
        let directory = try TemporaryDirectory()
        let base = try filesEnvironment(directory)
        #expect(try RegionResolver.resolve(explicit: "sa-east-1", environment: base.merging(["AWS_REGION": "x"]) { $1 }) == "sa-east-1")
        #expect(try RegionResolver.resolve(environment: base.merging(["AWS_REGION": "us-east-2", "AWS_DEFAULT_REGION": "y"]) { $1 }) == "us-east-2")
        #expect(try RegionResolver.resolve(environment: base.merging(["AWS_DEFAULT_REGION": "ca-central-1"]) { $1 }) == "ca-central-1")
        #expect(try RegionResolver.resolve(environment: base) == "eu-west-1")
        #expect(try RegionResolver.resolve(environment: base.merging(["AWS_PROFILE": "work"]) { $1 }) == "us-west-2")
        #expect(try RegionResolver.resolve(environment: base, profile: "work") == "us-west-2")
    }

    @Test func missingRegionNamesEverySource() throws {
        let directory = try TemporaryDirectory()
        let error = #expect(throws: RegionResolver.NotFound.self) {
            try RegionResolver.resolve(environment: isolatedEnvironment(home: directory.path))
        }
        let text = error.map(String.init(describing:)) ?? ""
        #expect(text.contains("AWS_REGION"))
        #expect(text.contains("AWS_DEFAULT_REGION"))
        #expect(text.contains("profile 'default'"))
    }
}
