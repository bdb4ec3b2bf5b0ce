import DiscfgCore
import DiscfgNetwork

/// What `GET /metrics` answers on the etcd API's port, as etcd serves Prometheus' text on
/// its client port: the server's own series (the REST API's `/metrics` text, when the
/// server runs beside it; else the process's, ``DiscfgNetwork/ProcessMetrics``), then the
/// etcd series its tools read of a member of one, which is its own leader.
///
/// Open to anyone, as the REST API's `/metrics` and etcd's are: it names no key or value.
enum EtcdMetrics {
    /// The answer: `served` (the server's text), then etcd's series, the database size
    /// being the config's live bytes (as `Status` answers it) when `info` has them, and
    /// its quota when it has one.
    static func text(served: String, info: ConfigInfo?) -> String {
        var text = served
        func series(_ name: String, _ help: String, _ value: Int) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
        }
        series("etcd_server_has_leader", "Whether or not a leader exists. 1 is existence, 0 is not.", 1)
        series("etcd_server_is_leader", "Whether or not this member is a leader. 1 if is, 0 otherwise.", 1)
        if let bytes = info?.byteCount {
            series("etcd_mvcc_db_total_size_in_bytes", "Total size of the underlying database physically allocated in bytes.", bytes)
            series("etcd_mvcc_db_total_size_in_use_in_bytes", "Total size of the underlying database logically in use in bytes.", bytes)
        }
        if let quota = info?.settings.quotaBytes {
            series("etcd_server_quota_backend_bytes", "Current backend storage quota size in bytes.", quota)
        }
        return text
    }

    /// The content type of Prometheus' text format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}
