import DiscfgCore
import DiscfgJSON
import DiscfgWire
import Foundation

extension SetCommand {
    /// `--document`: the object as the keys under `prefix`, one change. With
    /// --dry-run or --if-revision the document is worked out against the keys as they are
    /// at one revision and written as an import bound to it, so the plan printed is the
    /// change that lands.
    func setDocument(config: ConfigName, prefix rawPrefix: String, argument: String?, output: Output) async throws {
        let conditions = try condition.conditions()
        for (given, flag) in [(!conditions.isEmpty, "conditions"), (ttl != nil, "--ttl"), (contentType != nil, "--content-type"), (secret, "--secret")] where given {
            throw usage("\(flag) cannot be used with --document: a document is written as its keys, each keeping its own", field: "--document")
        }
        let prefix = try KeyPrefix(rawPrefix)
        let data = try Self.readValue(argument, dataFile: dataFile, limit: Limits.maxSnapshotBytes, what: "document")
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(data))
        } catch {
            throw usage("\(Self.source(argument, dataFile: dataFile)) is not valid JSON: \(error)", field: "document")
        }
        let store = try global.openStore()
        let done: @Sendable (ImportResult) -> String = { result in
            let deleted = result.events.filter { $0.kind == .delete }.count
            let written = result.events.count - deleted
            let keys = written == 1 ? "key" : "keys"
            return "set the document under \(prefix): \(written) \(keys) written, \(deleted) deleted, \(result.unchanged) unchanged (revision \(result.revision))"
        }
        guard plan.dryRun || plan.ifRevision != nil else {
            let result = try await store.putDocument(value, under: prefix, in: config, replace: replace)
            output.emit(Envelope(action: "document", config: config, changes: result)) { done(result) }
            return
        }
        let (current, read) = try await Self.liveItems(under: prefix, of: config, in: store)
        let (snapshot, options) = try KeyDocument.importable(value, under: prefix, current: current, replace: replace)
        let given = dataFile.map { " -d \($0 == "-" ? "FILE" : $0)" } ?? " DOCUMENT"
        try await plan.run(
            snapshot, into: config, options, store: store, output: output, read: read,
            what: "set the document under \(prefix)" + (replace ? ", deleting the keys it lacks," : ""),
            apply: "discfg set \(config) \(prefix) --document\(given)" + (replace ? " --replace" : ""), action: "document", done: done
        )
    }

    /// The live items under `prefix`, read as an export reads them (at one revision), and
    /// that revision.
    private static func liveItems(under prefix: KeyPrefix, of config: ConfigName, in store: any ConfigStore) async throws -> ([Item], Revision) {
        let pages = try await store.exportPages(config, maxBytes: Limits.maxPageBytes)
        let read = pages.header.revision
        var items: [Item] = []
        for try await page in pages {
            for entry in page where prefix.contains(entry.key) {
                items.append(Item(
                    key: entry.key, value: entry.value, contentType: entry.contentType, version: 1,
                    createRevision: read, modRevision: read, modifiedAt: pages.header.exportedAt, expiresAt: entry.expiresAt
                ))
            }
        }
        return (items, read)
    }
}
