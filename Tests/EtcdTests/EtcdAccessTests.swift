import DiscfgCore
@testable import DiscfgEtcd
import DiscfgSQLite
import Foundation
import GRPCCore
import Synchronization
import Testing

/// The etcd API's access rule over a real SQLite store's tokens: open until a token is
/// issued, closed from the next reading on, and closed too whenever the token state
/// cannot be read or the last reading is stale: it never fails open.
@Suite("etcd API: access follows the store's tokens and never fails open")
struct EtcdAccessTests {
    @Test("open without tokens; refused with etcd's 'user name is empty' once one exists; UNAVAILABLE when the store cannot tell or the reading is old")
    func followsTokens() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("etcd-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.db").path
        let store = try SQLiteStore(path: path)
        let notices = NoticeLog()
        let gate = EtcdAccessGate(.closedOnceTokensIssued(store)) { notices.append($0) }
        #expect(gate.refusal() == EtcdAccessGate.unknown, "nothing read yet: refused")
        await gate.read()
        #expect(gate.refusal() == nil)
        #expect(gate.refusal(at: .now + .seconds(3)) == EtcdAccessGate.unknown, "a reading older than 2 s admits nobody")

        try await store.saveToken(AccessToken(id: "0123456789ab", hash: Data(repeating: 7, count: 32), role: .read, configs: nil, description: nil, createdAt: Date()))
        await gate.read()
        #expect(gate.refusal() == EtcdAccessGate.userEmpty)
        #expect(gate.refusal()?.code == .invalidArgument)
        #expect(notices.lines.contains("tokens are required: the etcd API has no authentication yet and refuses every call"))

        // The store stops answering: its token tables are gone.
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", "import sqlite3; c = sqlite3.connect('\(path)'); c.execute('DROP TABLE tokens'); c.execute('DROP TABLE token_history'); c.commit()"]
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        await gate.read()
        #expect(gate.refusal() == EtcdAccessGate.unknown)
        #expect(gate.refusal()?.code == .unavailable)

        #expect(EtcdAccessGate(.open).refusal() == nil)
        #expect(EtcdAccessGate(.closed).refusal() == EtcdAccessGate.userEmpty)
    }
}

/// What the gate told the log.
private final class NoticeLog: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}
