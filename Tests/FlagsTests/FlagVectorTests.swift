import DiscfgJSON
import Testing

@testable import DiscfgFlags

@Suite("FlagsTests.Vectors")
struct FlagVectorTests {
    @Test("MurmurHash3 x86 32 with seed 0 gives the published values")
    func murmur() {
        #expect(MurmurHash3.x86_32(Array("hello".utf8)) == 613_153_351)
        #expect(MurmurHash3.x86_32(Array("a".utf8)) == 1_009_084_850)
        #expect(MurmurHash3.x86_32([UInt8]()) == 0)
    }

    @Test("canonical CBOR of the default bucketing value is the published encoding")
    func cbor() {
        let bytes = CanonicalCBOR.encode(.array([.string("my-flag"), .string("user-123")]))
        #expect(bytes.map { String(format: "%02x", $0) }.joined() == "82676d792d666c616768757365722d313233")
    }
}
