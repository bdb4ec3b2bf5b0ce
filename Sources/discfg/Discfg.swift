import ArgumentParser

/// The `discfg` command line.
struct Discfg: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discfg",
        abstract: "A distributed configuration service: keep configuration out of your code.",
        discussion: """
        Configuration lives in named configs of keys (/db/host) with versions, \
        revisions, compare-and-swap, TTLs, history and watch. By default it is kept \
        in an embedded SQLite file; choose another store with --store or DISCFG_STORE.

        QUICK START:
          discfg create myapp
          discfg use myapp               # this directory uses myapp (.discfg)
          discfg set db/host db1.internal
          discfg get db/host
          discfg get db/host -f json     # the envelope: action, item, prevItem
          discfg set db/host db2 --if-version 1
          discfg watch /db/              # print changes as they happen

        STORES (--store URL or DISCFG_STORE):
          sqlite:///path/file.db    an embedded file (the default is
                                    $XDG_DATA_HOME/discfg/discfg.db)
          memory:                   nothing is kept after the command ends
          http://HOST:PORT          a discfg server (discfg serve); also https
          dynamodb://REGION/TABLE   Amazon DynamoDB (TABLE default: discfg)

        A dynamodb:// URL takes ?endpoint=URL (a local DynamoDB), ?profile=P and \
        ?consistent=true; its AWS flags are --region/-l, --cred-profile/-p, \
        --key-id/-k and --secret-key (the original's spellings --credProfile, \
        --keyId, --secretKey and -s still work).

        \(ExitStatus.help)
        """,
        version: BuildInfo.line,
        subcommands: [
            InitCommand.self, CreateCommand.self, DeleteConfigCommand.self, ConfigsCommand.self, UseCommand.self, WhichCommand.self,
            InfoCommand.self, UpdateCommand.self, SetCommand.self, GetCommand.self, PatchCommand.self, DeleteCommand.self, TxnCommand.self,
            ListCommand.self, HistoryCommand.self, LogCommand.self, DiffCommand.self, WatchCommand.self, PublishCommand.self, ExportCommand.self, ImportCommand.self, RollbackCommand.self, PromoteCommand.self, DeployCommand.self, ExecCommand.self,
            SchemaCommand.self, FlagCommand.self, KeyCommand.self, ServeCommand.self, AgentCommand.self, TokenCommand.self, ContextCommand.self, LambdaCommand.self, DoctorCommand.self, VersionCommand.self,
        ]
    )
}
