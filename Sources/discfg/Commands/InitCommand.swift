import ArgumentParser
import DiscfgCore
import DiscfgDynamoDB
import DiscfgWire
import Foundation

/// `discfg init`: makes the store ready — on DynamoDB, creates the table; on SQLite, the file.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Prepare the store: create the SQLite file or the DynamoDB table if it is missing.",
        usage: "discfg init [<options>]",
        discussion: """
        On a dynamodb:// store, creates the table (on-demand billing, or \
        provisioned with --read-capacity and --write-capacity), waits until it is \
        ACTIVE, and turns on its stream and TTL. An existing table is left as it is. \
        On a sqlite: store, creates the file (and its folder) if it is missing: \
        commands that only use a store never do. Other stores need no setup.

        Examples:
          discfg init --store dynamodb://us-east-1/discfg
          discfg init --store \\
              'dynamodb://us-east-1/discfg?endpoint=http://127.0.0.1:8000'
          discfg init --store dynamodb://eu-west-1/discfg-prod \\
              --read-capacity 5 --write-capacity 5
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions
    @OptionGroup var capacity: CapacityOptions

    func run() async throws {
        try await global.run("init") { output in
            var fileMade = false
            if case .sqlite(let path) = try global.storeLocation() { fileMade = !FileManager.default.fileExists(atPath: path) }
            let store = try global.makeStore(tableCapacity: capacity.capacity())
            var envelope = Envelope(action: "init")
            guard let dynamo = store as? DynamoDBStore else {
                envelope.message = fileMade ? "created store \(global.storeDescription)" : "store \(global.storeDescription) is ready"
                output.emit(envelope) { fileMade ? "created store \(global.storeDescription)" : "store \(global.storeDescription) is ready; nothing to create" }
                return
            }
            let created = try await dynamo.table.ensure(capacity: dynamo.configuration.tableCapacity, progress: dynamo.configuration.progress)
            let status = try await dynamo.table.describe().map(TableDocument.init)
            envelope.table = status
            envelope.message = created ? "created table \(dynamo.table.name)" : "table \(dynamo.table.name) already exists"
            output.emit(envelope) {
                ([envelope.message ?? ""] + (status?.rows ?? []).map { "  \($0[0].padding(toLength: 10, withPad: " ", startingAt: 0))\($0[1])" })
                    .joined(separator: "\n")
            }
        }
    }
}
