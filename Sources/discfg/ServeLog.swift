import ArgumentParser
import DiscfgAPI
import DiscfgCore
import Foundation
import Logging
import Synchronization

extension LogFormat: ExpressibleByArgument {}

/// The lines `serve` writes of its own on standard error (its start line, notices and
/// warnings), in the one format of its log (`--log-format`). They are written whatever
/// `--log-level` is, as the command's own words.
struct ServeLog: Sendable {
    let sink: LogSink
    let format: LogFormat

    /// Writes `message` now, with `fields` after it in `json` and `logfmt` (a `text`
    /// line says everything in its message).
    func write(_ level: Logger.Level, _ message: String, fields: [(String, String)] = []) {
        let time = format == .text ? sink.timestamp() : LogFormat.now()
        sink.append(bytes: Array(format.line(time: time, level: level, label: "discfg", message: message, fields: format == .text ? [] : fields).utf8), urgent: true)
    }
}

/// `serve`'s start line, written once every listener it opens listens, naming each URL it
/// serves: the REST API, the console at /ui/ (unless --no-ui), /metrics, and the etcd API
/// (with --etcd), as `serving STORE on http://HOST:PORT: REST API …, console …, metrics …,
/// etcd API over config etcd on HOST:PORT (auth: …)`.
final class StartLine: Sendable {
    private let log: ServeLog
    private let store: String
    private let scheme: String
    private let host: String
    private let console: Bool
    private let etcd: (host: String, config: ConfigName)?
    private let auth: String
    private let ports = Mutex<(rest: Int?, etcd: Int?, written: Bool)>((nil, nil, false))

    init(log: ServeLog, store: String, scheme: String, host: String, console: Bool, etcd: (host: String, config: ConfigName)?, auth: String) {
        self.log = log
        self.store = store
        self.scheme = scheme
        self.host = host
        self.console = console
        self.etcd = etcd
        self.auth = auth
    }

    /// The REST API listens on `port`.
    func restListening(_ port: Int) {
        ports.withLock { $0.rest = port }
        writeWhenAllListen()
    }

    /// The etcd API listens on `port`.
    func etcdListening(_ port: Int) {
        ports.withLock { $0.etcd = port }
        writeWhenAllListen()
    }

    private func writeWhenAllListen() {
        let ready: (rest: Int, etcd: Int?)? = ports.withLock { ports in
            guard !ports.written, let rest = ports.rest, etcd == nil || ports.etcd != nil else { return nil }
            ports.written = true
            return (rest, ports.etcd)
        }
        guard let ready else { return }
        let (message, fields) = text(rest: ready.rest, etcd: ready.etcd)
        log.write(.notice, message, fields: fields)
    }

    /// The line's message and its fields.
    func text(rest: Int, etcd etcdPort: Int?) -> (String, [(String, String)]) {
        let base = "\(scheme)://\(Self.bracketed(host)):\(rest)"
        var urls: [(String, String, String)] = [("REST API", "api", base + "/v1/")]
        if console { urls.append(("console", "console", base + "/ui/")) }
        urls.append(("metrics", "metrics", base + "/metrics"))
        var described = urls.map { "\($0.0) \($0.2)" }
        var fields = [("store", store)] + urls.map { ($0.1, $0.2) }
        if let etcd, let etcdPort {
            let address = "\(Self.bracketed(etcd.host)):\(etcdPort)"
            described.append("etcd API over config \(etcd.config) on \(address)")
            fields += [("etcd", address), ("etcdConfig", etcd.config.rawValue)]
        }
        fields.append(("auth", auth))
        return ("serving \(store) on \(base): \(described.joined(separator: ", ")) (auth: \(auth))", fields)
    }

    private static func bracketed(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }
}
