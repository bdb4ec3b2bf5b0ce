import DiscfgCore
import DiscfgJSON
import DiscfgTestSupport
import Foundation
import Testing

/// `discfg flag` through the built binary on a SQLite file (ls, eval, enable and disable,
/// preview, and the bad input each refuses), and the same through a live `discfg serve`.
@Suite("CLI: feature flags")
struct FlagCommandTests {
    /// A flag set as a person writes one: spacing, a float written 10.0, a 5-branch rule.
    static let web = """
        {
          "flags": {
            "new-ui": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
              "targeting": {"if": [{"==": [{"var": "plan"}, "pro"]}, "on", {"starts_with": [{"var": "email"}, "admin@"]}, "on", null]}},
            "price": {"state": "ENABLED", "variants": {"low": 10.0, "high": 12.50}, "defaultVariant": "low",
              "targeting": {"fractional": [["low", 50], ["high", 50]]}},
            "banner": {"state": "ENABLED", "variants": {"a": "hello"}, "defaultVariant": "a"}
          },
          "metadata": {"team": "web"}
        }
        """

    /// Config `app` with /flags/web (revision 1).
    static func runner() async throws -> CLIRunner {
        let cli = try CLIRunner()
        try await cli.run("create", "app")
        _ = try cli.write("web.json", Data(web.utf8))
        let set = try await cli.run("set", "app", "/flags/web", "-d", "web.json")
        #expect(set.status == 0, "\(set.stderr)")
        return cli
    }

    static func json(_ text: String) throws -> JSONObject {
        guard case .object(let object) = try JSONParser.parse(text) else { throw DiscfgError.invalid("output", "not an object: \(text)") }
        return object
    }

    @Test("flag ls lists each flag's state, variants, default, targeting and set, in text and JSON")
    func list() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let human = try await cli.run("flag", "ls", "app")
        #expect(human.status == 0, "\(human.stderr)")
        let lines = human.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(lines.first == ["FLAG", "STATE", "VARIANTS", "DEFAULT", "TARGETING", "SET"])
        #expect(lines.dropFirst().map(\.first) == ["banner", "new-ui", "price"])
        #expect(lines[3] == ["price", "ENABLED", "low=10.0", "high=12.50", "low", "yes", "/flags/web"], "\(human.stdout)")
        #expect(lines[1] == ["banner", "ENABLED", "a=\"hello\"", "a", "no", "/flags/web"], "\(human.stdout)")

        let json = try await cli.run("flag", "ls", "app", "-f", "json")
        #expect(json.status == 0)
        #expect(json.stdout.contains(#"{"key":"price","state":"ENABLED","variants":{"low":10.0,"high":12.50},"defaultVariant":"low","targeting":true,"set":"/flags/web"}"#), "\(json.stdout)")
        #expect(try Self.json(json.stdout)["revision"] == .number(JSONNumber(1)))

        let empty = try await cli.run("create", "bare")
        #expect(empty.status == 0)
        #expect(try await cli.run("flag", "ls", "bare").stdout.contains("no flags in config bare"))
    }

    @Test("flag eval prints value, variant, reason and the if branch that answered; exit 3 for an unknown flag, 2 for a bad context")
    func evaluate() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let pro = try await cli.run("flag", "eval", "app", "new-ui", #"{"targetingKey": "u1", "plan": "pro"}"#)
        #expect(pro.status == 0, "\(pro.stderr)")
        #expect(pro.stdout.contains("value:   true\n") && pro.stdout.contains("variant: on\n") && pro.stdout.contains("reason:  TARGETING_MATCH\n"), "\(pro.stdout)")
        #expect(pro.stdout.contains(#"rule:    targeting's if branch 1 gave variant "on""#), "\(pro.stdout)")

        _ = try cli.write("admin.json", Data(#"{"targetingKey": "u2", "email": "admin@example.org"}"#.utf8))
        let admin = try await cli.run("flag", "eval", "app", "new-ui", "-d", "admin.json", "-f", "json")
        #expect(admin.status == 0, "\(admin.stderr)")
        let answer = try Self.json(admin.stdout)
        #expect(answer["value"] == .bool(true) && answer["variant"] == .string("on") && answer["reason"] == .string("TARGETING_MATCH"))
        #expect(answer["rule"] == .string(#"targeting's if branch 2 gave variant "on""#))
        #expect(answer["metadata"] == .object(JSONObject([("team", .string("web"))])))

        let other = try await cli.run("flag", "eval", "app", "new-ui", #"{"targetingKey": "u3"}"#, "-f", "json")
        let otherAnswer = try Self.json(other.stdout)
        #expect(otherAnswer["reason"] == .string("DEFAULT") && otherAnswer["variant"] == .string("off"), "\(other.stdout)")
        #expect(otherAnswer["rule"] == .string("targeting's if else gave null: the default variant"))

        // A float variant is printed as written, 10.0 or 12.50, whichever bucket u1 falls in.
        let price = try await cli.run("flag", "eval", "app", "price", #"{"targetingKey": "u1"}"#)
        #expect(price.stdout.contains("value:   10.0\n") || price.stdout.contains("value:   12.50\n"), "\(price.stdout)")
        let banner = try await cli.run("flag", "eval", "app", "banner")
        #expect(banner.status == 0 && banner.stdout.contains("reason:  STATIC\n") && banner.stdout.contains("value:   \"hello\"\n"), "\(banner.stdout)")

        let unknown = try await cli.run("flag", "eval", "app", "nope")
        #expect(unknown.status == 3 && unknown.stdout.isEmpty)
        #expect(unknown.stderr == "discfg: flag \"nope\" is not defined in config \"app\" (its flags are banner, new-ui, price)\n", "\(unknown.stderr)")
        let notJSON = try await cli.run("flag", "eval", "app", "new-ui", "{plan: pro}")
        #expect(notJSON.status == 2 && notJSON.stderr.hasPrefix("discfg: the context argument is not JSON: "), "\(notJSON.stderr)")
        let notObject = try await cli.run("flag", "eval", "app", "new-ui", "[1]")
        #expect(notObject.status == 2 && notObject.stderr.contains("must be a JSON object"), "\(notObject.stderr)")
        let missing = try await cli.run("flag", "eval", "app", "new-ui", "-d", "absent.json")
        #expect(missing.status == 2 && missing.stderr == "discfg: cannot read absent.json: no such file\n", "\(missing.stderr)")
        let targetingKey = try await cli.run("flag", "eval", "app", "new-ui", #"{"targetingKey": 7}"#, "-f", "json")
        #expect(targetingKey.status == 1)
        #expect(try Self.json(targetingKey.stdout)["errorCode"] == .string("INVALID_CONTEXT"), "\(targetingKey.stdout)")
    }

    @Test("flag disable and enable rewrite only the flag's state, as one change conditioned on the set's revision, with its message")
    func killSwitch() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let off = try await cli.run("flag", "disable", "app", "new-ui", "-m", "checkout errors")
        #expect(off.status == 0 && off.stdout == "flag \"new-ui\" disabled in /flags/web (revision 2)\n", "\(off.stdout)\(off.stderr)")
        let stored = try await cli.run("get", "app", "/flags/web")
        #expect(stored.stdout == Self.web.replacingOccurrences(of: #""new-ui": {"state": "ENABLED""#, with: #""new-ui": {"state": "DISABLED""#) + "\n")
        let evaluated = try await cli.run("flag", "eval", "app", "new-ui", #"{"plan": "pro"}"#)
        #expect(evaluated.status == 0 && evaluated.stdout.contains("reason:  DISABLED\n"), "\(evaluated.stdout)")
        let log = try await cli.run("log", "app", "-f", "json")
        #expect(try log.envelope().events?.first?.message == "checkout errors")
        #expect(try log.envelope().events?.count == 2)

        let again = try await cli.run("flag", "disable", "app", "new-ui")
        #expect(again.status == 0 && again.stderr.contains("already DISABLED"), "\(again.stderr)")
        #expect(try await cli.run("info", "app", "-f", "json").envelope().configInfo?.revision == Revision(2))

        let on = try await cli.run("flag", "enable", "app", "new-ui", "-m", "fixed", "-f", "json")
        #expect(on.status == 0)
        #expect(try Self.json(on.stdout)["revision"] == .number(JSONNumber(3)), "\(on.stdout)")
        #expect(try await cli.run("get", "app", "/flags/web").stdout == Self.web + "\n")
        let unknown = try await cli.run("flag", "disable", "app", "nope")
        #expect(unknown.status == 3 && unknown.stderr.hasPrefix("discfg: flag \"nope\" is not defined"), "\(unknown.stderr)")
    }

    @Test("flag preview counts variants, reasons and errors over a JSON array or JSON lines; bad files are one sentence, exit 2")
    func preview() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let lines = #"{"targetingKey": "a", "plan": "pro"}"# + "\n\n" + #"{"targetingKey": "b"}"# + "\n" + #"{"targetingKey": "c", "email": "admin@x"}"# + "\n" + #"{"targetingKey": 1}"# + "\n"
        _ = try cli.write("sample.jsonl", Data(lines.utf8))
        let counted = try await cli.run("flag", "preview", "app", "new-ui", "--contexts", "sample.jsonl", "-f", "json")
        #expect(counted.status == 0, "\(counted.stderr)")
        let answer = try Self.json(counted.stdout)
        #expect(answer["contexts"] == .number(JSONNumber(4)))
        #expect(answer["variants"] == .object(JSONObject([("on", .number(JSONNumber(2))), ("off", .number(JSONNumber(1))), ("(caller's default)", .number(JSONNumber(1)))])), "\(counted.stdout)")
        #expect(answer["reasons"] == .object(JSONObject([("DEFAULT", .number(JSONNumber(1))), ("ERROR", .number(JSONNumber(1))), ("TARGETING_MATCH", .number(JSONNumber(2)))])))
        #expect(answer["errors"] == .object(JSONObject([("INVALID_CONTEXT", .number(JSONNumber(1)))])))

        // 1,000 users over a 50/50 split: both halves, adding up, as the evaluator buckets them.
        let users = "[" + (0..<1000).map { #"{"targetingKey": "user-\#($0)"}"# }.joined(separator: ",") + "]"
        _ = try cli.write("users.json", Data(users.utf8))
        let split = try await cli.run("flag", "preview", "app", "price", "--contexts", "users.json")
        #expect(split.status == 0, "\(split.stderr)")
        let rows = split.stdout.split(separator: "\n").prefix(3).map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(rows.first == ["VARIANT", "CONTEXTS", "SHARE", "VALUE"])
        let low = Int(rows[1][1]) ?? 0, high = Int(rows[2][1]) ?? 0
        #expect(rows[1].first == "low" && rows[2].first == "high" && low + high == 1000 && (400...600).contains(low), "\(split.stdout)")
        #expect(split.stdout.contains("1000 contexts, flag \"price\" of /flags/web at revision 1"))

        _ = try cli.write("bad.jsonl", Data("{\"a\": 1}\n[2]\n".utf8))
        let bad = try await cli.run("flag", "preview", "app", "price", "--contexts", "bad.jsonl")
        #expect(bad.status == 2 && bad.stderr == "discfg: bad.jsonl line 2 is not a JSON object\n", "\(bad.stderr)")
        let absent = try await cli.run("flag", "preview", "app", "price", "--contexts", "absent.json")
        #expect(absent.status == 2 && absent.stderr == "discfg: cannot read absent.json: no such file\n", "\(absent.stderr)")
        let unknown = try await cli.run("flag", "preview", "app", "nope", "--contexts", "users.json")
        #expect(unknown.status == 3)
    }

    @Test("writes under /flags/ are checked: a set flagd refuses, or one sharing a flag key, is one sentence, exit 2, nothing changed")
    func refusedWrites() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let shared = try await cli.run("set", "app", "/flags/billing", #"{"flags": {"price": {"state": "ENABLED", "variants": {"a": 1}, "defaultVariant": "a"}}}"#)
        #expect(shared.status == 2)
        #expect(shared.stderr == "discfg: /flags/billing defines flag \"price\" (at /flags/price), which /flags/web defines already; a flag key may live in one flag set of a config only\n", "\(shared.stderr)")
        let bad = try await cli.run("set", "app", "/flags/billing", #"{"flags": {"x": {"state": "ENABLED", "variants": {"a": 1}, "defaultVariant": "b"}}}"#)
        #expect(bad.status == 2 && bad.stderr == "discfg: /flags/billing is not a flag set: /flags/x/defaultVariant: defaultVariant \"b\" is not one of the flag's variants (a)\n", "\(bad.stderr)")
        #expect(try await cli.run("info", "app", "-f", "json").envelope().configInfo?.revision == Revision(1))
    }

    @Test("through discfg serve: ls, eval, disable and preview read and write over HTTP, and a bad set is refused")
    func throughServer() async throws {
        let cli = try await Self.runner()
        defer { cli.cleanUp() }
        let (server, port) = try await cli.serve()
        defer { Task { await server.kill() } }
        var remote = cli
        remote.environment["DISCFG_STORE"] = "http://127.0.0.1:\(port)"
        #expect(try await remote.run("flag", "ls", "app").stdout.contains("/flags/web"))
        let pro = try await remote.run("flag", "eval", "app", "new-ui", #"{"plan": "pro"}"#)
        #expect(pro.status == 0 && pro.stdout.contains("variant: on\n"), "\(pro.stdout)\(pro.stderr)")
        let off = try await remote.run("flag", "disable", "app", "new-ui", "-m", "incident")
        #expect(off.status == 0, "\(off.stderr)")
        #expect(try await remote.run("flag", "eval", "app", "new-ui", #"{"plan": "pro"}"#).stdout.contains("reason:  DISABLED\n"))
        #expect(try await remote.run("log", "app", "-f", "json").envelope().events?.first?.message == "incident")
        _ = try cli.write("one.json", Data(#"[{"targetingKey": "a"}]"#.utf8))
        let preview = try await remote.run("flag", "preview", "app", "new-ui", "--contexts", "one.json", "-f", "json")
        #expect(try Self.json(preview.stdout)["reasons"] == .object(JSONObject([("DISABLED", .number(JSONNumber(1)))])), "\(preview.stdout)")
        let bad = try await remote.run("set", "app", "/flags/web", #"{"flags": {"new-ui": {"state": "OFF", "variants": {"a": 1}}}}"#)
        #expect(bad.status == 2 && bad.stderr.contains("/flags/web is not a flag set: /flags/new-ui/state"), "\(bad.stderr)")
    }
}
