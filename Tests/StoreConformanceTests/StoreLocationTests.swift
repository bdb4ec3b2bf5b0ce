import DiscfgCore
import DiscfgStores
import Foundation
import Testing

/// `--store` and `DISCFG_STORE`: every form a store URL takes, and every bad one refused
/// with `invalidArgument` on the `store` field and a message that quotes what was given
/// and says what would do.
@Suite("Store URLs")
struct StoreLocationTests {
    @Test("SQLite paths: absolute with sqlite:///, relative with sqlite:, percent-escapes decoded", arguments: [
        ("sqlite:///var/lib/discfg/discfg.db", "/var/lib/discfg/discfg.db"),
        ("sqlite:/var/lib/discfg.db", "/var/lib/discfg.db"),
        ("sqlite:data/discfg.db", "data/discfg.db"),
        ("sqlite:discfg.db", "discfg.db"),
        ("SQLite:///tmp/x.db", "/tmp/x.db"),
        ("  sqlite:///tmp/padded.db  ", "/tmp/padded.db"),
        ("sqlite:///tmp/with%20space.db", "/tmp/with space.db"),
        ("sqlite:///tmp/%E6%97%A5.db", "/tmp/日.db"),
    ])
    func sqlite(_ text: String, _ path: String) throws {
        let location = try StoreLocation(parsing: text)
        #expect(location == .sqlite(path: path))
        // What it prints parses back to the same store.
        #expect(try StoreLocation(parsing: location.description) == location)
    }

    @Test("memory: and servers over http and https, with a port and a path prefix")
    func memoryAndServers() throws {
        #expect(try StoreLocation(parsing: "memory:") == .memory)
        #expect(try StoreLocation(parsing: "MEMORY:") == .memory)
        #expect(StoreLocation.memory.description == "memory:")
        for text in ["http://127.0.0.1:8899", "https://config.example.com", "https://abc.execute-api.eu-west-1.amazonaws.com/prod", "http://[::1]:8899", "http://host:1", "http://host:65535"] {
            let location = try StoreLocation(parsing: text)
            #expect(location == .server(URL(string: text)!), "\(text)")
            #expect(location.description == text)
        }
    }

    @Test("DynamoDB tables: region and table, the default table, and each parameter")
    func dynamodb() throws {
        let full = try StoreLocation(parsing: "dynamodb://eu-west-1/discfg-prod?endpoint=http://127.0.0.1:8000&profile=ops&consistent=true")
        #expect(full == .dynamodb(DynamoDBLocation(region: "eu-west-1", table: "discfg-prod", endpoint: URL(string: "http://127.0.0.1:8000"), profile: "ops", consistentReads: true)))
        #expect(try StoreLocation(parsing: full.description) == full)
        // No table: discfg's; no region: the AWS CLI's.
        #expect(try StoreLocation(parsing: "dynamodb://us-east-1") == .dynamodb(DynamoDBLocation(region: "us-east-1")))
        #expect(try StoreLocation(parsing: "dynamodb://us-east-1/") == .dynamodb(DynamoDBLocation(region: "us-east-1")))
        #expect(try StoreLocation(parsing: "dynamodb:///t_1.x") == .dynamodb(DynamoDBLocation(table: "t_1.x")))
        #expect(try StoreLocation(parsing: "dynamodb://US-EAST-1/t12?consistent=0") == .dynamodb(DynamoDBLocation(region: "us-east-1", table: "t12")))
    }

    /// The message a refused URL gets, having checked it is `invalidArgument` on `store`.
    static func refusal(_ text: String) -> String? {
        do {
            let location = try StoreLocation(parsing: text)
            Issue.record("\"\(text)\" was taken as \(location)")
            return nil
        } catch let error as DiscfgError {
            #expect(error.code == .invalidArgument, "\(text)")
            #expect(error.field == "store", "\(text)")
            return error.message
        } catch {
            Issue.record("\"\(text)\" failed with \(error)")
            return nil
        }
    }

    @Test("not a URL, or a scheme this build does not know: refused with the forms that work", arguments: [
        ("", "is not a URL"), ("   ", "is not a URL"), ("/var/lib/discfg.db", "is not a URL"), ("discfg.db", "is not a URL"),
        ("ftp://host/x", "unknown scheme \"ftp\""), ("postgres://db/discfg", "unknown scheme \"postgres\""),
        ("file:///tmp/x.db", "unknown scheme \"file\""), (":memory:", "unknown scheme \"\""), ("sqlite3:///x.db", "unknown scheme \"sqlite3\""),
    ])
    func notAStoreURL(_ text: String, _ says: String) throws {
        let message = try #require(Self.refusal(text))
        #expect(message.contains(says), "\(message)")
        #expect(message.contains("sqlite:"), "\(message)")
    }

    @Test("a SQLite URL that names no file, or gives parameters it would ignore", arguments: [
        ("sqlite:", "names no file"), ("sqlite://", "names no file"), ("sqlite:?mode=ro", "names no file"),
        ("sqlite:///tmp/x.db?mode=ro", "takes no parameters"), ("sqlite:x.db?cache=shared&mode=memory", "takes no parameters"),
        ("sqlite:///tmp/x.db#main", "takes no parameters"),
    ])
    func badSQLite(_ text: String, _ says: String) throws {
        let message = try #require(Self.refusal(text))
        #expect(message.contains(says), "\(message)")
        #expect(message.contains(text.trimmingCharacters(in: .whitespaces)), "\(message)")
    }

    @Test("sqlite://NAME/… is refused, naming both spellings of a path: absolute and relative", arguments: [
        ("sqlite://tmp/x.db", "sqlite:///tmp/x.db", "sqlite:tmp/x.db"),
        ("sqlite://data/discfg.db", "sqlite:///data/discfg.db", "sqlite:data/discfg.db"),
        ("sqlite://localhost/var/x.db", "sqlite:///localhost/var/x.db", "sqlite:localhost/var/x.db"),
    ])
    func sqliteHost(_ text: String, _ absolute: String, _ relative: String) throws {
        let message = try #require(Self.refusal(text))
        #expect(message.contains("host"), "\(message)")
        #expect(message.contains(absolute), "\(message)")
        #expect(message.contains(relative + " for a path relative"), "\(message)")
    }

    @Test("a server URL without a host, with a port no server listens on, or with parameters", arguments: [
        ("http://", "not a server address"), ("https:", "not a server address"), ("http:8899", "not a server address"),
        ("http://:8899", "not a server address"),
        ("http://127.0.0.1:0", "port"), ("http://127.0.0.1:65536", "port"), ("http://127.0.0.1:-1", "port"),
        ("http://127.0.0.1:9223372036854775808", "port"), ("http://127.0.0.1:18446744073709551616", "port"),
        ("http://127.0.0.1:99999999999999999999999", "port"), ("https://host:abc", "port"),
        ("http://127.0.0.1:8899/?token=x", "takes no parameters"), ("https://host/prod?stage=1", "takes no parameters"),
        ("http://127.0.0.1:8899/#frag", "takes no parameters"),
    ])
    func badServer(_ text: String, _ says: String) throws {
        let message = try #require(Self.refusal(text))
        #expect(message.contains(says), "\(message)")
        #expect(message.contains("http://127.0.0.1:8899"), "\(message)")
    }

    @Test("a DynamoDB URL with a bad region, table, endpoint or parameter", arguments: [
        ("dynamodb://us_east_1/t12", "not an AWS region"),
        ("dynamodb://us-east-1/ab", "not a DynamoDB table name"),
        ("dynamodb://us-east-1/a/b/c", "not a DynamoDB table name"),
        ("dynamodb://us-east-1/" + String(repeating: "t", count: 256), "not a DynamoDB table name"),
        ("dynamodb:us-east-1/t12", "not a DynamoDB table name"),
        ("dynamodb://us-east-1/t12?endpoint=ftp://x", "is not an http(s) URL"),
        ("dynamodb://us-east-1/t12?endpoint=", "is not an http(s) URL"),
        ("dynamodb://us-east-1/t12?endpoint=http://127.0.0.1:0", "port"),
        ("dynamodb://us-east-1/t12?endpoint=http://127.0.0.1:65536", "port"),
        ("dynamodb://us-east-1/t12?profile=", "profile"),
        ("dynamodb://us-east-1/t12?consistent=yes", "must be true or false"),
        ("dynamodb://us-east-1/t12?region=eu-west-1", "unknown parameter \"region\""),
    ])
    func badDynamoDB(_ text: String, _ says: String) throws {
        let message = try #require(Self.refusal(text))
        #expect(message.contains(says), "\(message)")
    }

    @Test("the default store is discfg.db under XDG_DATA_HOME, else under HOME's .local/share")
    func defaultLocation() {
        #expect(StoreLocation.defaultLocation(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]) == .sqlite(path: "/data/discfg/discfg.db"))
        #expect(StoreLocation.defaultLocation(environment: ["XDG_DATA_HOME": "", "HOME": "/home/u"]) == .sqlite(path: "/home/u/.local/share/discfg/discfg.db"))
        #expect(StoreLocation.defaultLocation(environment: ["HOME": "/home/u"]).description == "sqlite:///home/u/.local/share/discfg/discfg.db")
    }
}
