import DiscfgCore
import DiscfgService
import DiscfgWire
import Foundation
import Hummingbird
import Synchronization

extension ConfigAPI {
    /// `GET export?format=json|yaml|env&revision=R` (R: a past revision; default now).
    /// The store's pages are encoded as they are read,
    /// so the server holds about one page (``Options/maxPageBytes``) of the config, not
    /// all of it; a page that fails (history needed for the export's revision gone) ends
    /// the response unfinished rather than with a snapshot that mixes revisions.
    func export(_ request: Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let format = try SnapshotFormat(parsing: request.query("format") ?? "json", field: "format")
        let revision = try request.revision("revision")
        let pages = try await perform(Action(.export, on: config, reaching: .prefix(.root))) {
            try await store.exportPages(config, maxBytes: options.maxPageBytes, atRevision: revision)
        }
        let contentType = switch format {
        case .json: APIResponse.jsonContentType
        case .yaml: "application/yaml"
        case .env: "text/plain; charset=utf-8"
        }
        // Env may be refused (clashing names, binary values, names that change how
        // programs start): encode it before answering, which holds it whole, so only up
        // to what an import reads.
        if format == .env {
            let allowed = Set(request.uri.queryParameters.getAll("allowEnv").map { String($0) })
            var data = Data()
            try await format.encode(Self.startupVariablesRefused(Self.bounded(pages, config: config), config: config, allowed: allowed), chunkBytes: .max) {
                data.append($0)
            }
            return APIResponse.bytes(data, contentType: contentType)
        }
        let body = ResponseBody { writer in
            try await format.encode(pages, chunkBytes: 64 * 1024) { try await writer.write(ByteBuffer(bytes: $0)) }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: contentType], body: body)
    }

    /// `pages` as long as their keys and values stay within ``Limits/maxSnapshotBytes``
    /// (16 MiB, the most an import reads): an export that is held whole before it is
    /// answered (env) fails with `tooLarge` past that, rather than holding a config of any
    /// size in memory for each request.
    static func bounded(_ pages: SnapshotPages, config: ConfigName) -> SnapshotPages {
        let read = Mutex(0)
        return pages.mapPages { page in
            let total = read.withLock { total in
                total += page.map(PageBudget.size).reduce(0, +)
                return total
            }
            guard total <= Limits.maxSnapshotBytes else {
                throw DiscfgError(
                    .tooLarge,
                    "config \"\(config)\" holds more than \(Limits.maxSnapshotBytes) bytes (16 MiB) of keys and values, the most an env export is answered with; export it as json or yaml, which are written as they are read",
                    field: "format"
                )
            }
            return page
        }
    }

    /// `pages`, refused where a key would set a variable that changes how programs load
    /// or start (``StartupVariables``): an env export is for a shell to source, and
    /// whoever can write the config must not choose `LD_PRELOAD` or `BASH_ENV` for every
    /// host that sources it. `allowEnv=NAME` (repeatable) lets a name through, as the
    /// CLI's `--allow-env` does.
    static func startupVariablesRefused(_ pages: SnapshotPages, config: ConfigName, allowed: Set<String>) -> SnapshotPages {
        pages.mapPages { page in
            for entry in page {
                try StartupVariables.check(
                    EnvFile.variableName(for: entry.key), key: entry.key, config: config, allowed: allowed, command: "an env export", allowing: "allowEnv"
                )
            }
            return page
        }
    }

    /// `POST import?format=&replace=&prefix=&replaceSchemas=&ifRevision=&dryRun=`: the body
    /// is a snapshot file. A dry run answers the change as it would be (action `plan`).
    func importSnapshot(_ request: inout Request, _ context: some DiscfgRequestContext, _ perform: Performer) async throws -> Response {
        let config = try request.configName(context)
        let format = try Self.snapshotFormat(of: request)
        // The query first: a bad parameter is named before the body is read.
        var options = ImportOptions(replace: try request.flag("replace"), replaceSchemas: try request.flag("replaceSchemas"), dryRun: try request.flag("dryRun"))
        if let prefix = request.query("prefix") { options.prefix = try KeyPrefix(prefix) }
        options.ifRevision = try request.revision("ifRevision")
        let snapshot = try format.decode(try await request.bodyData(limit: self.options.maxImportBytes))
        let chosen = options
        let result = try await perform(.importing(snapshot, options, on: config), message: snapshot.message) {
            try await RequestDeadlines.commit { try await store.importSnapshot(snapshot, into: config, options: chosen) }
        }
        return APIResponse.json(Envelope(action: options.dryRun ? "plan" : "import", config: config, changes: result))
    }

    /// The format of a snapshot body (an import's, a deployment's candidate): `format`, or
    /// else the `Content-Type` (YAML, plain text as env, JSON otherwise).
    static func snapshotFormat(of request: Request) throws -> SnapshotFormat {
        if let named = request.query("format") { return try SnapshotFormat(parsing: named, field: "format") }
        let type = request.headers[.contentType] ?? ""
        return type.contains("yaml") ? .yaml : type.hasPrefix("text/plain") ? .env : .json
    }
}
