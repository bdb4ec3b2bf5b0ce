import DiscfgCore
import Testing

@Suite("EnvFile: variable names and the keys an env import gives them")
struct EnvFileKeyTests {
    @Test("a variable's key is the key whose variable it is, for lower-case keys of letters and digits")
    func inverse() throws {
        for path in ["/db/host", "/greeting", "/a/b/c", "/1x", "/app/v2/port"] {
            let key = try Key(path)
            #expect(try EnvFile.key(forVariable: EnvFile.variableName(for: key)) == key)
        }
    }

    @Test("what does not round-trip: underscores, upper case and punctuation become path separators and lower case")
    func lossy() throws {
        #expect(try EnvFile.key(forVariable: "DB_HOST").path == "/db/host")
        #expect(try EnvFile.variableName(for: Key("/db_host")) == "DB_HOST")
        #expect(try EnvFile.key(forVariable: "A__B_").path == "/a/b")
        #expect(try EnvFile.key(forVariable: "_1X").path == "/1x")
        #expect(throws: DiscfgError.self) { try EnvFile.key(forVariable: "__") }
    }
}
