import ArgumentParser
import DiscfgClient
import DiscfgCore
import DiscfgStores
import Foundation

/// The context in effect for a command, and what chose it.
struct ContextChoice {
    let name: ContextName
    let context: StoreContext
    /// `--context`, `DISCFG_CONTEXT`, the `.discfg` path, or "current context".
    let source: String
    /// Whether it was named for this command (`--context`, `DISCFG_CONTEXT`), which
    /// puts its config before a `.discfg` one.
    let isExplicit: Bool
}

extension GlobalOptions {
    /// The contexts file's path.
    var contextFilePath: String { ContextFile.path(environment: environment) }

    /// The context in effect: `--context`, then `DISCFG_CONTEXT`, then a `context:` line
    /// in the nearest `.discfg`, then the current context; nil when none is.
    /// - Throws: `invalidArgument` for a bad or unknown name, or a contexts file open to others.
    func chosenContext() throws -> ContextChoice? {
        let named: (String, String, Bool)?
        if let context {
            named = (context, "--context", true)
        } else if let value = environment["DISCFG_CONTEXT"], !value.isEmpty {
            named = (value, "DISCFG_CONTEXT", true)
        } else if let file = try DiscfgFile.nearest(), let context = file.context {
            named = (context.rawValue, file.path, false)
        } else {
            named = nil
        }
        let path = contextFilePath
        guard let (text, source, isExplicit) = named else {
            guard let file = try ContextFile.load(from: path), let current = file.current else { return nil }
            let name = try ContextName(current)
            return ContextChoice(name: name, context: try file.context(name, path: path, source: "the current context"), source: "current context", isExplicit: false)
        }
        let name: ContextName
        do {
            name = try ContextName(text)
        } catch let error as DiscfgError {
            throw DiscfgError.invalid("context", "\(source): \(error.message)")
        }
        let file = try ContextFile.load(from: path) ?? ContextFile()
        return ContextChoice(name: name, context: try file.context(name, path: path, source: source), source: source, isExplicit: isExplicit)
    }

    /// The context whose store the command uses: the chosen one, unless `--store` or
    /// `DISCFG_STORE` names the store. Its token file and TLS files go with its store only.
    func storeContext() throws -> ContextChoice? {
        if store != nil { return nil }
        if let value = environment["DISCFG_STORE"], !value.isEmpty { return nil }
        return try chosenContext()
    }

    /// The bearer token: `--token`, else nil when `DISCFG_TOKEN` is set (the opener reads
    /// it), else the store context's token file, read now.
    func resolvedToken() throws -> String? {
        if let token { return token }
        if let value = environment["DISCFG_TOKEN"], !value.isEmpty { return nil }
        guard let tokenFile = try storeContext()?.context.tokenFile else { return nil }
        return try FilePermissions.readToken(tokenFile)
    }

    /// The TLS files: each flag, else its variable (read by the opener), else the store context's.
    func resolvedTLS() throws -> ClientTLS {
        let context = try storeContext()?.context
        func pick(_ flag: String?, _ variable: String, _ saved: String?) -> String? {
            if let flag { return flag }
            if let value = environment[variable], !value.isEmpty { return nil }
            return saved
        }
        return ClientTLS(
            caCertificate: pick(cacert, "DISCFG_CACERT", context?.cacert),
            certificate: pick(cert, "DISCFG_CERT", context?.cert),
            key: pick(key, "DISCFG_KEY", context?.key)
        )
    }
}

extension ShellCompletion {
    /// A context name: those in the contexts file that start with the typed prefix.
    static let contexts = CompletionKind.custom { _, _, prefix in
        let path = ContextFile.path(environment: ProcessInfo.processInfo.environment)
        let file = (try? ContextFile.load(from: path)) ?? nil
        return (file?.contexts.keys.filter { $0.hasPrefix(prefix) } ?? []).sorted()
    }
}
