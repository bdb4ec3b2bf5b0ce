import Testing

@testable import JSONSchema

@Suite("JSONSchemaTests.URIReference")
struct URIReferenceTests {
    /// RFC 3986 section 5.4: references resolved against http://a/b/c/d;p?q.
    @Test(arguments: [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"),
        ("../../", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"),
        ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"),
        ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
    ])
    func resolvesAsRFC3986Says(_ reference: String, _ expected: String) {
        #expect(URIReference.resolve(reference, against: "http://a/b/c/d;p?q") == expected)
    }

    @Test func urnsAndEmptyBases() {
        #expect(URIReference.resolve("#foo", against: "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed") == "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#foo")
        #expect(URIReference.resolve("#/$defs/a", against: "") == "#/$defs/a")
        #expect(URIReference.resolve("other.json", against: "") == "other.json")
    }
}
