import DiscfgTestSupport
import Foundation
import Testing

/// Every help page reads well at 80 and at 120 columns: argument-parser wraps prose to
/// the terminal's width, so the texts must leave prose to it and keep examples and
/// tables short enough that it never wraps them.
@Suite("Help pages fit the terminal")
struct HelpWidthTests {
    @Test("every command's help fits 80 and 120 columns, with no stranded fragment or wrapped row")
    func everyPageFits() async throws {
        let runner = try CLIRunner()
        defer { runner.cleanUp() }
        let commands = try await HelpPages.commandPaths(runner)
        #expect(commands.count >= 30, "the command tree: \(commands)")
        #expect(commands.contains(["token", "create"]) && commands.contains(["key", "rotate"]))
        for width in [80, 120] {
            var sized = runner
            sized.environment["COLUMNS"] = String(width)
            for path in commands {
                let result = try await sized.run(path + ["--help"])
                let name = (["discfg"] + path).joined(separator: " ")
                #expect(result.status == 0, "\(name) --help: \(result.stderr)")
                #expect(result.stdout.contains("USAGE: discfg"), "\(name) --help")
                let problems = HelpLayout.problems(in: result.stdout, width: width)
                #expect(problems.isEmpty, "\(name) --help at \(width) columns:\n\(problems.joined(separator: "\n"))")
            }
        }
    }

    @Test("the layout rules catch what hand-wrapped help looked like")
    func rulesCatchHandWrapping() {
        // discfg --help at 80 columns when its discussion was wrapped by hand at ~90.
        let old = """
        OVERVIEW: A distributed configuration service: keep configuration out of your
        code.

        Configuration lives in named configs of keys (/db/host) with versions,
        revisions,
        compare-and-swap, TTLs, history and watch. By default it is kept in an embedded
        SQLite file; choose another store with --store or DISCFG_STORE.

        QUICK START:
          discfg create myapp
          discfg use myapp                     # remember myapp for this directory
        (.discfg)
          discfg get db/host -f json           # the JSON envelope: action, item,
        prevItem
          dynamodb://REGION/TABLE  Amazon DynamoDB (table default discfg);
        ?endpoint=URL for a
                                   local DynamoDB, ?profile=P, ?consistent=true; AWS

        USAGE: discfg init [--store <url>] [--token <token>] [--format <format>] [--region <region>]

        OPTIONS:
          --webhook-secret-file <file>
                                  Read the webhook secret from a file (first line).
          -h, --help              Show help information.
        """
        let problems = HelpLayout.problems(in: old, width: 80)
        for fragment in ["revisions,", "(.discfg)", "prevItem", "?endpoint=URL for a"] {
            #expect(problems.contains { $0.hasSuffix("\"\(fragment)\"") }, "\(fragment) in \(problems)")
        }
        #expect(problems.contains { $0.contains("longer than 80") && $0.contains("USAGE: discfg init") })
        #expect(problems.count == 5, "\(problems)")
        // Short example lines after a heading are neither fragments nor wrapped rows.
        #expect(HelpLayout.problems(in: "A short paragraph.\n\nEXAMPLES:\n  discfg serve\n  discfg ls /db -r\n", width: 80).isEmpty)
    }
}

/// The command tree, as the binary describes it.
enum HelpPages {
    /// Every command's and subcommand's path below `discfg`, the root as `[]`.
    static func commandPaths(_ runner: CLIRunner) async throws -> [[String]] {
        let result = try await runner.run("--experimental-dump-help")
        try #require(result.status == 0, "\(result.stderr)")
        let tool = try JSONDecoder().decode(DumpedTool.self, from: result.stdoutData)
        var paths: [[String]] = []
        func walk(_ command: DumpedTool.Command, _ path: [String]) {
            paths.append(path)
            for sub in command.subcommands ?? [] where sub.commandName != "help" {
                walk(sub, path + [sub.commandName])
            }
        }
        walk(tool.command, [])
        return paths
    }

    /// The part of argument-parser's `ToolInfoV0` the tests read.
    struct DumpedTool: Decodable {
        struct Command: Decodable {
            var commandName: String
            var subcommands: [Command]?
        }
        var command: Command
    }
}

/// What makes a rendered help page read badly at a width.
///
/// argument-parser wraps each line of a discussion at the width and puts what does
/// not fit at the left margin. Text wrapped by hand at another width therefore leaves
/// a few words on a line of their own mid-paragraph, and an indented example or table
/// row that is too long breaks back to the margin. The rules, for the lines above
/// `USAGE:` (the overview and discussion; option help is one string per option, which
/// the parser wraps itself):
/// - a line is longer than the width (anywhere on the page);
/// - stranded fragment: a line of one or two words at the margin, after a line at the
///   margin longer than half the width and before another line at the margin (a hand
///   line break that the parser's wrapping left in the middle of a paragraph);
/// - wrapped row: a line at the margin right after an indented line (an example or
///   table row that did not fit and wrapped back to the margin), unless it is a
///   heading (ends with ':'); prose after an example or a table needs a blank line.
enum HelpLayout {
    static func problems(in page: String, width: Int) -> [String] {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var problems: [String] = []
        for (index, line) in lines.enumerated() where line.count > width {
            problems.append("line \(index + 1) is longer than \(width) columns (\(line.count)): \(line)")
        }
        let discussionEnd = lines.firstIndex { $0.hasPrefix("USAGE:") } ?? lines.endIndex
        for index in lines.indices.dropFirst() where index < discussionEnd {
            let line = lines[index], previous = lines[index - 1]
            guard !isBlank(line), !isBlank(previous), !line.hasSuffix(":") else { continue }
            let words = line.split(separator: " ").count
            let next = index + 1 < discussionEnd ? lines[index + 1] : ""
            if indent(line) == 0, indent(previous) > 0 {
                problems.append("line \(index + 1) is an indented row wrapped back to the margin: \"\(line)\"")
            } else if words <= 2, indent(line) == 0, indent(previous) == 0, previous.count > width / 2, !isBlank(next), indent(next) == 0 {
                problems.append("line \(index + 1) is a stranded fragment: \"\(line)\"")
            }
        }
        return problems
    }

    private static func isBlank(_ line: String) -> Bool { line.allSatisfy { $0 == " " } }

    private static func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }
}
