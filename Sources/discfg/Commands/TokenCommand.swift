import ArgumentParser
import DiscfgCore
import DiscfgWire
import Foundation

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke the bearer tokens a server accepts.",
        discussion: """
        Tokens are kept in the store (only their SHA-256 hash); the token itself \
        is shown once, when created. Roles: read (get, list, history, watch, \
        export), write (also set, delete, import), admin (also create, update and \
        delete configs).

        --scope limits a token to a config (myapp), to the key /app and the keys \
        under /app/ of it (myapp:/app/; never /apple), or to the etcd API's keys \
        starting with the bytes /registry/ (myapp:etcd:/registry/). A request \
        reaching past every scope (a list or watch of /, a txn with one key \
        outside) is refused with 403, never narrowed.

        Once a token has been created, a server in --auth auto requires tokens \
        even after every token is revoked; 'discfg token forget' (with no valid \
        token left) opens it to this machine again.

        Examples:
          discfg token create --role read --scope myapp-prod --description "web"
          discfg token create --role write --scope myapp-prod:/app/feature/
          discfg token list
          discfg token revoke 3f9a0c12b7de
          discfg token forget --yes
        """,
        subcommands: [Create.self, List.self, Revoke.self, Forget.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a token and print it once.",
            usage: "discfg token create [<options>] --role <role>"
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @Option(name: .long, help: "read, write or admin.") var role: Role
        @Option(name: .customLong("scope"), help: ArgumentHelp(
            "Limit the token to a config (myapp), the keys under a prefix in it (myapp:/app/) or the etcd keys under an etcd prefix (myapp:etcd:/registry/); repeatable.",
            valueName: "scope"
        ), completion: ShellCompletion.configs)
        var scopes: [String] = []
        @Option(name: .long, help: "Who holds it, for 'token list'.") var description: String?

        func run() async throws {
            try await global.run("token-create") { output in
                let scopes = try scopes.isEmpty ? nil : scopes.map(AccessScope.init)
                let (token, record) = try await global.openTokenAdministration(creating: true).issueToken(role: role, scopes: scopes, description: description)
                output.emit(Envelope(issuedToken: token, record: record)) {
                    """
                    \(token)
                    (token \(record.id), role \(record.role.rawValue)\(record.scopes.map { ", scopes " + $0.joined(separator: ",") } ?? ""); it is not shown again)
                    """
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never the tokens themselves).", usage: "discfg token list [<options>]")

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

        func run() async throws {
            try await global.run("tokens") { output in
                let tokens = try await global.openTokenAdministration().tokens()
                output.emit(Envelope(tokens: tokens)) {
                    guard !tokens.isEmpty else { return "no tokens; create one with 'discfg token create --role read'" }
                    let now = Date()
                    return Show.table(
                        ["ID", "ROLE", "SCOPES", "CREATED", "DESCRIPTION"],
                        tokens.map { [$0.id, $0.role.rawValue, ($0.scopes ?? $0.configs)?.joined(separator: ",") ?? "*", Show.relative($0.createdAt, now: now), $0.description ?? ""] }
                    )
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by its id.", usage: "discfg token revoke [<options>] <id>")

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @Argument(help: "The token's id (from 'token list').", completion: ShellCompletion.tokenIDs) var id: String

        func run() async throws {
            try await global.run("token-revoke") { output in
                let tokens = try global.openTokenAdministration()
                let record = try await tokens.revokeToken(id: id)
                let remaining = try await tokens.tokens().count
                output.emit(Envelope(revokedToken: record)) {
                    "revoked token \(id); servers stop accepting it within a few seconds"
                        + (remaining == 0 ? "\nno valid token is left: servers keep requiring one ('discfg token create'; 'discfg token forget' to open them again)" : "")
                }
            }
        }
    }

    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget that tokens were issued, so a loopback server in --auth auto is open again.",
            usage: "discfg token forget [<options>]",
            discussion: "Refused while any token is valid. Servers notice within a few seconds."
        )

        @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
        @Flag(name: [.short, .long], help: "Do not ask for confirmation.") var yes = false

        func run() async throws {
            try await global.run("token-forget") { output in
                let store = try global.openTokenStore()
                let remaining = try await store.listTokens().count
                guard remaining == 0 else { throw DiscfgError.invalid("token", "\(remaining) token(s) are still valid; revoke them first ('discfg token list', 'discfg token revoke ID')") }
                try Confirmation.require("open servers in --auth auto to this machine without tokens", yes: yes)
                try await store.forgetIssuedTokens()
                // The action says what was done; message is a sentence for people, as in
                // the original's envelopes.
                let done = "servers in --auth auto on loopback take requests without a token again"
                var envelope = Envelope(action: "token-forget")
                envelope.message = done
                output.emit(envelope) { done }
            }
        }
    }
}

extension Role: ExpressibleByArgument {}
