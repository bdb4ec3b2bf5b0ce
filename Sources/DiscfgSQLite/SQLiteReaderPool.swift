import DiscfgCore
import Synchronization

/// Read connections to a SQLite store, reused across reads.
///
/// In WAL mode readers never wait for the writer, so reads run on the caller's thread:
/// they take microseconds and never fsync. Each read is one transaction, so it sees one
/// consistent revision of the file, including other processes' commits.
final class SQLiteReaderPool: Sendable {
    private let path: String
    private let idle = Mutex<[ConnectionBox]>([])
    private let maxIdle = 8
    private static let begin = SQLiteStatement("BEGIN")

    init(path: String) {
        self.path = path
    }

    /// Runs `body` inside a read transaction on a pooled connection.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let box = try idle.withLock { $0.popLast() } ?? ConnectionBox(SQLiteConnection(path: path, create: false))
        let connection = box.connection
        try connection.run(Self.begin)
        defer {
            _ = try? connection.run(SQLiteStatement.commit)
            idle.withLock { if $0.count < maxIdle { $0.append(box) } }
        }
        return try body(connection)
    }
}
