import DiscfgAWS
import DiscfgCore
import DiscfgSecrets
import Foundation

extension GlobalOptions {
    /// The keyring this command opens secrets with: local key files, and KMS through
    /// the AWS flags and credential chain.
    func keyring() throws -> SecretKeyring {
        let credentials = CredentialChain.standard(explicit: try aws.explicitCredentials(), environment: environment, profile: aws.credProfile)
        return SecretKeyring(resolver: StandardKeyResolver(environment: environment, credentials: credentials))
    }
}

/// Key names as people type them: a relative `file://` path is made absolute, so the
/// config names the same file from any directory.
enum KeyName {
    static func normalized(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("file://") else {
            try EncryptionSettings.validate(keyName: trimmed)
            return trimmed
        }
        var path = String(trimmed.dropFirst("file://".count))
        if path.hasPrefix("~/") { path = NSHomeDirectory() + path.dropFirst(1) }
        if !path.hasPrefix("/") { path = FileManager.default.currentDirectoryPath + "/" + path }
        let name = "file://" + (path as NSString).standardizingPath
        try EncryptionSettings.validate(keyName: name)
        return name
    }
}

extension Show {
    /// A value for a table cell or a line; a secret shows as `(secret)`.
    static func preview(_ item: Item, limit: Int) -> String {
        item.isSecret ? SecretMarker.masked : preview(item.value, limit: limit)
    }
}
