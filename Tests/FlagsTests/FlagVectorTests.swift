import DiscfgJSON
import Foundation
import Testing

@testable import DiscfgFlags

@Suite("FlagsTests.Vectors")
struct FlagVectorTests {
    @Test("MurmurHash3 x86 32 with seed 0 gives the published values")
    func murmur() {
        #expect(MurmurHash3.x86_32(Array("hello".utf8)) == 613_153_351)
        #expect(MurmurHash3.x86_32(Array("a".utf8)) == 1_009_084_850)
        #expect(MurmurHash3.x86_32([UInt8]()) == 0)
        // More from pip's mmh3 (5.3.1), unsigned: every tail length, UTF-8 beyond ASCII.
        #expect(MurmurHash3.x86_32(Array("flagd".utf8)) == 3_362_821_523)
        #expect(MurmurHash3.x86_32(Array("my-flaguser-123".utf8)) == 680_103_842)
        #expect(MurmurHash3.x86_32(Array("ünïcødé".utf8)) == 2_210_329_462)
        #expect(MurmurHash3.x86_32(Array("The quick brown fox jumps over the lazy dog".utf8)) == 776_992_547)
    }

    @Test("canonical CBOR of the default bucketing value is the published encoding")
    func cbor() {
        let bytes = CanonicalCBOR.encode(.array([.string("my-flag"), .string("user-123")]))
        #expect(hex(bytes) == "82676d792d666c616768757365722d313233")
    }

    /// From pip's cbor2 (canonical=True) after openfeature-flagd-core 2.0.0's number normalisation.
    @Test("canonical CBOR of numbers, booleans, null and objects is cbor2's, integral floats as integers")
    func cborValues() throws {
        let vectors: [(String, String)] = [
            ("7", "07"), ("7.0", "07"), ("2.5", "f94100"), ("-1", "20"), ("1000000", "1a000f4240"), ("-300", "39012b"),
            ("-9223372036854775808", "3b7fffffffffffffff"), ("true", "f5"), ("null", "f6"),
            (#"{"b": 1, "aa": [1.5, "x"]}"#, "a261620162616182f93e006178"), ("1e300", "fb7e37e43c8800759c"),
            ("0.1", "fb3fb999999999999a"), ("5.960464477539063e-08", "f90001"),
        ]
        for (json, expected) in vectors {
            #expect(hex(CanonicalCBOR.encode(LogicValue(try JSONParser.parse(json)))) == expected, "\(json)")
        }
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
