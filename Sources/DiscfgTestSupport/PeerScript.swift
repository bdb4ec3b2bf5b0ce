import Foundation

/// The client programs of other projects' libraries that tests run against discfg, kept
/// in `Tests/Peers` (Python: etcd clients, HTTP/2 abuse, Patroni).
public enum PeerScript {
    /// The path of `Tests/Peers/<name>`.
    public static func path(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Tests/Peers/\(name)").standardized.path
    }
}
