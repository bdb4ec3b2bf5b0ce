import Crypto
import DiscfgAWS
import DiscfgCore
import Foundation
import Synchronization

/// An AWS KMS key: data keys come from `GenerateDataKey` and are recovered with
/// `Decrypt`, each with the config's encryption context, signed with SigV4.
///
/// Named `kms://REGION/alias/NAME`, `kms://REGION/KEY-ID` or by the key's or alias's ARN.
/// The endpoint can be set the AWS way, `AWS_ENDPOINT_URL_KMS` then `AWS_ENDPOINT_URL`
/// (VPC endpoints, tests).
public struct KMSKey: KeyEncryptionKey {
    public let name: String
    /// The `KeyId` sent to KMS: `alias/NAME`, a key id, or an ARN.
    public let keyID: String
    /// The key's region.
    public let region: String
    private let client: AWSJSONClient

    /// Parses a KMS key name into its region and `KeyId`; nil when `name` is not one.
    public static func parse(_ name: String) -> (region: String, keyID: String)? {
        if name.hasPrefix("kms://") {
            let rest = name.dropFirst("kms://".count)
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            let region = String(rest[..<slash])
            let keyID = String(rest[rest.index(after: slash)...])
            guard Self.isRegion(region), !keyID.isEmpty, keyID != "alias/" else { return nil }
            return (region, keyID)
        }
        let parts = name.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "arn", parts[2] == "kms", Self.isRegion(String(parts[3])),
              parts[5].hasPrefix("key/") || parts[5].hasPrefix("alias/")
        else { return nil }
        return (String(parts[3]), name)
    }

    private static func isRegion(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 32 && text.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
    }

    /// A key named `name`, called through `client`'s credentials from `environment`.
    ///
    /// - Throws: `invalidArgument` when `name` is not a KMS key name.
    public init(name: String, credentials: any CredentialProvider, environment: [String: String]) throws {
        guard let (region, keyID) = Self.parse(name) else {
            throw DiscfgError.invalid("encryption", "\"\(name.debugEscaped)\" is not a KMS key: use kms://REGION/alias/NAME, kms://REGION/KEY-ID or the key's ARN")
        }
        self.name = name
        self.region = region
        self.keyID = keyID
        let endpoint = [environment["AWS_ENDPOINT_URL_KMS"], environment["AWS_ENDPOINT_URL"]]
            .compactMap { $0 }.first { !$0.isEmpty }.flatMap(URL.init(string:))
        let configuration = AWSJSONClient.Configuration(
            region: region, service: "kms", targetPrefix: "TrentService", endpoint: endpoint, contentType: "application/x-amz-json-1.1"
        )
        client = Self.clients.withLock { clients in
            let id = "\(region) \(endpoint?.absoluteString ?? "")"
            if let client = clients[id] { return client }
            let client = AWSJSONClient(configuration: configuration, credentialProvider: credentials)
            clients[id] = client
            return client
        }
    }

    /// One client per region and endpoint, kept for the life of the process (a client
    /// must not be released without a shutdown, and commands are short).
    private static let clients = Mutex<[String: AWSJSONClient]>([:])

    private struct GenerateDataKeyInput: Encodable {
        let KeyId: String
        let KeySpec = "AES_256"
        let EncryptionContext: [String: String]
    }

    private struct GenerateDataKeyOutput: Decodable {
        let CiphertextBlob: String
        let Plaintext: String
    }

    private struct EncryptInput: Encodable {
        let KeyId: String
        let Plaintext: String
        let EncryptionContext: [String: String]
    }

    private struct EncryptOutput: Decodable {
        let CiphertextBlob: String
    }

    private struct DecryptInput: Encodable {
        let KeyId: String
        let CiphertextBlob: String
        let EncryptionContext: [String: String]
    }

    private struct DecryptOutput: Decodable {
        let Plaintext: String
    }

    public func generateDataKey(context: [String: String]) async throws -> (key: SymmetricKey, wrapped: Data) {
        let output = try await call("GenerateDataKey", GenerateDataKeyInput(KeyId: keyID, EncryptionContext: context), as: GenerateDataKeyOutput.self)
        guard let plaintext = Data(base64Encoded: output.Plaintext), plaintext.count == 32, let wrapped = Data(base64Encoded: output.CiphertextBlob) else {
            throw DiscfgError(.unavailable, "KMS key \(name) answered GenerateDataKey without a 256-bit key")
        }
        return (SymmetricKey(data: plaintext), wrapped)
    }

    public func wrap(_ dataKey: SymmetricKey, context: [String: String]) async throws -> Data {
        try await encrypt(dataKey.withUnsafeBytes { Data($0) }, context: context)
    }

    public func unwrap(_ wrapped: Data, context: [String: String]) async throws -> SymmetricKey {
        let plaintext = try await decrypt(wrapped, context: context, naming: context["discfg:dataKey"].map { "data key \"\($0)\"" })
        guard plaintext.count == 32 else {
            throw DiscfgError(.unavailable, "KMS key \(name) answered Decrypt without a 256-bit key")
        }
        return SymmetricKey(data: plaintext)
    }

    /// `Encrypt`: up to 4 KiB of `plaintext` under this key, bound to `context`.
    public func encrypt(_ plaintext: Data, context: [String: String]) async throws -> Data {
        let output = try await call("Encrypt", EncryptInput(KeyId: keyID, Plaintext: plaintext.base64EncodedString(), EncryptionContext: context), as: EncryptOutput.self)
        guard let blob = Data(base64Encoded: output.CiphertextBlob) else {
            throw DiscfgError(.unavailable, "KMS key \(name) answered Encrypt without a ciphertext")
        }
        return blob
    }

    /// `Decrypt` of a blob made by ``encrypt(_:context:)`` with the same `context`;
    /// `naming` says what the blob is, for errors.
    public func decrypt(_ blob: Data, context: [String: String], naming: String? = nil) async throws -> Data {
        let input = DecryptInput(KeyId: keyID, CiphertextBlob: blob.base64EncodedString(), EncryptionContext: context)
        let output = try await call("Decrypt", input, as: DecryptOutput.self, dataKey: naming)
        guard let plaintext = Data(base64Encoded: output.Plaintext) else {
            throw DiscfgError(.unavailable, "KMS key \(name) answered Decrypt without a plaintext")
        }
        return plaintext
    }

    private func call<Input: Encodable, Output: Decodable>(
        _ operation: String, _ input: Input, as: Output.Type, dataKey: String? = nil
    ) async throws -> Output {
        do {
            return try await client.send(operation: operation, input: input, as: Output.self)
        } catch let error as AWSError {
            throw Self.explain(error, operation: operation, key: name, dataKey: dataKey)
        } catch let error as DecodingError {
            throw DiscfgError(.unavailable, "KMS answered \(operation) with a body discfg cannot read: \(error)")
        }
    }

    /// One clear error naming the key, the operation and what was being opened.
    static func explain(_ error: AWSError, operation: String, key: String, dataKey: String?) -> DiscfgError {
        let what = dataKey.map { "\($0) with KMS key \(key)" } ?? "KMS key \(key)"
        switch error.awsCode {
        case "AccessDeniedException":
            return DiscfgError(.permissionDenied, "KMS refused kms:\(operation) on \(what): the caller has no permission for it (\(error.message))", field: "encryption")
        case "InvalidCiphertextException":
            return DiscfgError.invalid("encryption", "\(what) does not open: the data key was changed, belongs to another config, or was wrapped by another key")
        case "IncorrectKeyException":
            return DiscfgError.invalid("encryption", "\(what) does not open: it was wrapped by another KMS key")
        case "NotFoundException":
            return DiscfgError.invalid("encryption", "KMS key \(key) does not exist in its region")
        case "DisabledException", "KMSInvalidStateException":
            return DiscfgError(.unavailable, "KMS key \(key) cannot be used now: \(error.message)")
        default:
            return DiscfgError(error.code == .authentication ? .permissionDenied : .unavailable, "kms:\(operation) on \(what) failed: \(error)")
        }
    }
}
