import Crypto
import DiscfgAWS
import DiscfgCore
@testable import DiscfgSecrets
import Foundation
import Testing

@Suite("Secrets: sealed values")
struct SecretBoxTests {
    let dataKey = SymmetricKey(size: .bits256)
    let binding = SecretBinding(config: try! ConfigName("app"), key: try! Key("/db/password"), createRevision: Revision(12), version: 3)

    func sealed(_ value: String = "hunter2", contentType: String? = "text/plain") throws -> Data {
        try SecretBox.seal(Data(value.utf8), contentType: contentType, binding: binding, dataKeyID: "1", dataKey: dataKey)
    }

    @Test("a sealed value opens with its key and binding, with its content type, and does not contain the plaintext")
    func roundTrip() throws {
        let box = try sealed()
        #expect(box.range(of: Data("hunter2".utf8)) == nil)
        let (value, type) = try SecretBox.open(box, binding: binding, dataKey: dataKey)
        #expect(value == Data("hunter2".utf8))
        #expect(type == "text/plain")
        #expect(try SecretBox.header(of: box) == SecretBox.Header(dataKeyID: "1", contentType: "text/plain", createRevision: Revision(12), version: 3, payloadOffset: 4 + 1 + 1 + 1 + 10 + 8 + 8))
        #expect(try sealed() != box, "a fresh nonce every time")
        #expect(try SecretBox.open(try sealed("", contentType: nil), binding: binding, dataKey: dataKey) == (Data(), nil))
    }

    @Test("every flipped byte, another key, config or version, and another data key: one error naming the key, never plaintext")
    func tamper() throws {
        let box = try sealed()
        for index in box.indices {
            var changed = box
            changed[index] ^= 0x01
            #expect(throws: DiscfgError.self, "byte \(index)") { try SecretBox.open(changed, binding: binding, dataKey: dataKey) }
        }
        var other = binding
        other.key = try Key("/db/other")
        let moved = #expect(throws: DiscfgError.self) { try SecretBox.open(box, binding: other, dataKey: dataKey) }
        #expect(moved?.message.contains("/db/other") == true)
        other = binding
        other.config = try ConfigName("elsewhere")
        #expect(throws: DiscfgError.self) { try SecretBox.open(box, binding: other, dataKey: dataKey) }
        other = binding
        other.version = 4
        let rolled = #expect(throws: DiscfgError.self) { try SecretBox.open(box, binding: other, dataKey: dataKey) }
        #expect(rolled?.message.contains("rolled back") == true)
        // The same version of the key made again after a delete: another create revision.
        other = binding
        other.createRevision = Revision(40)
        let recreated = #expect(throws: DiscfgError.self) { try SecretBox.open(box, binding: other, dataKey: dataKey) }
        #expect(recreated?.message.contains("rolled back") == true && recreated?.message.contains("revision 12") == true)
        #expect(throws: DiscfgError.self) { try SecretBox.open(box, binding: binding, dataKey: SymmetricKey(size: .bits256)) }
        for cut in [0, 3, 4, 20, box.count - 1] {
            #expect(throws: DiscfgError.self, "cut at \(cut)") { try SecretBox.open(box.prefix(cut), binding: binding, dataKey: dataKey) }
        }
    }

    @Test("the largest value that fits is sealed into the store's value limit; one byte more is refused as too large")
    func sizes() throws {
        let limit = SecretBox.maxPlaintextBytes(dataKeyID: "1", contentType: "text/plain")
        let largest = try SecretBox.seal(Data(count: limit), contentType: "text/plain", binding: binding, dataKeyID: "1", dataKey: dataKey)
        #expect(largest.count == Limits.maxValueBytes)
        let refused = #expect(throws: DiscfgError.self) {
            try SecretBox.seal(Data(count: limit + 1), contentType: "text/plain", binding: binding, dataKeyID: "1", dataKey: dataKey)
        }
        #expect(refused?.code == .tooLarge)
    }
}

@Suite("Secrets: keys")
struct KeyTests {
    func scratch() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.path
    }

    @Test("a key file is made 0600 in a 0700 folder, never replaced, and refused once others can read it")
    func fileKey() async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/keys/one.key"
        let key = try FileKey.create(at: path)
        #expect(key.name == "file://" + path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: directory + "/keys")[.posixPermissions] as? Int
        #expect(folder == 0o700)
        #expect(throws: DiscfgError.self) { try FileKey.create(at: path) }

        let context = DataKeyContext.of(config: try ConfigName("app"), dataKeyID: "1")
        let (dataKey, wrapped) = try await key.generateDataKey(context: context)
        let unwrapped = try await FileKey(path: path).unwrap(wrapped, context: context)
        #expect(unwrapped == dataKey)
        await #expect(throws: DiscfgError.self, "another config's context") {
            try await key.unwrap(wrapped, context: DataKeyContext.of(config: try ConfigName("other"), dataKeyID: "1"))
        }
        let other = try FileKey.create(at: directory + "/two.key")
        let wrongKey = await #expect(throws: DiscfgError.self) { try await other.unwrap(wrapped, context: context) }
        #expect(wrongKey?.message.contains("two.key") == true)

        chmod(path, 0o640)
        let loose = #expect(throws: DiscfgError.self) { try FileKey(path: path) }
        #expect(loose?.message.contains("chmod 600") == true)
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: directory + "/junk.key"))
        chmod(directory + "/junk.key", 0o600)
        #expect(throws: DiscfgError.self) { try FileKey(path: directory + "/junk.key") }
    }

    @Test("KMS key names: kms://REGION/alias/NAME, kms://REGION/ID and ARNs; anything else is refused")
    func kmsNames() {
        #expect(KMSKey.parse("kms://us-east-1/alias/app")! == ("us-east-1", "alias/app"))
        #expect(KMSKey.parse("kms://eu-west-2/1234abcd-12ab-34cd-56ef-1234567890ab")! == ("eu-west-2", "1234abcd-12ab-34cd-56ef-1234567890ab"))
        let arn = "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
        #expect(KMSKey.parse(arn)! == ("us-west-2", arn))
        for bad in ["kms://", "kms://us-east-1", "kms://us-east-1/", "kms://US EAST/alias/x", "kms://us-east-1/alias/", "arn:aws:s3:::bucket", "file:///x"] {
            #expect(KMSKey.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("KMS refusals become one error naming the key and the permission")
    func kmsErrors() {
        let denied = KMSKey.explain(
            AWSError(code: .authentication, awsCode: "AccessDeniedException", message: "User is not authorized to perform: kms:Decrypt", httpStatus: 400),
            operation: "Decrypt", key: "kms://us-east-1/alias/app", dataKey: "data key \"2\""
        )
        #expect(denied.code == .permissionDenied)
        #expect(denied.message.contains("kms:Decrypt") && denied.message.contains("alias/app") && denied.message.contains("\"2\""))
        let tampered = KMSKey.explain(AWSError(code: .other, awsCode: "InvalidCiphertextException", message: "", httpStatus: 400), operation: "Decrypt", key: "kms://us-east-1/alias/app", dataKey: "data key \"1\"")
        #expect(tampered.code == .invalidArgument && tampered.message.contains("does not open"))
    }
}
