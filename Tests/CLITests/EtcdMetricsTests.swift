import DiscfgTestSupport
import Foundation
import Testing

/// `GET /metrics` on the etcd API's port, as etcd serves Prometheus' text on its client port.
@Suite("etcd API: /metrics on the etcd port, the REST API's series with the process's and etcd's")
struct EtcdMetricsTests {
    /// The value of the first sample of `name` in Prometheus text `text`.
    static func sample(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test("GET /metrics answers without credentials: the store's series of an etcdctl put, process_* from /proc, etcd's leader and database size; REST's /metrics has the process series too; POST is 405")
    func metrics() async throws {
        let etcd = try await EtcdPeer.start(.sqlite)
        do {
            _ = try await etcd.ok("put", "a", "1")
            let answer = try await LoopbackHTTP.exchange(port: etcd.etcdPort, "GET /metrics", body: Data())
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(300))")
            #expect(answer.lowercased().contains("content-type: text/plain; version=0.0.4; charset=utf-8"), "\(answer.prefix(300))")
            #expect(answer.contains("discfg_store_operation_duration_seconds"), "the REST API's series, the etcd put's store calls counted")
            #expect((Self.sample("process_resident_memory_bytes", in: answer) ?? 0) > Double(1 << 20), "\(answer)")
            #expect((Self.sample("process_open_fds", in: answer) ?? 0) > 0)
            #expect((Self.sample("process_cpu_seconds_total", in: answer) ?? 0) > 0)
            let started = try #require(Self.sample("process_start_time_seconds", in: answer))
            #expect(abs(started - Date().timeIntervalSince1970) < 3600, "started \(started)")
            #expect(Self.sample("etcd_server_has_leader", in: answer) == 1)
            #expect(Self.sample("etcd_server_is_leader", in: answer) == 1)
            #expect((Self.sample("etcd_mvcc_db_total_size_in_bytes", in: answer) ?? 0) > 0)
            #expect(Self.sample("etcd_server_quota_backend_bytes", in: answer) == Double(2 << 30))

            let rest = try await LoopbackHTTP.exchange(port: try await etcd.server.announcedPort(), "GET /metrics", body: Data())
            #expect(rest.hasPrefix("HTTP/1.1 200") && rest.contains("process_resident_memory_bytes "), "\(rest.prefix(300))")
            #expect(!rest.contains("etcd_server_has_leader"), "etcd's series are the etcd port's")

            let posted = try await LoopbackHTTP.exchange(port: etcd.etcdPort, "POST /metrics", body: Data("{}".utf8))
            #expect(posted.hasPrefix("HTTP/1.1 405"), "\(posted.prefix(300))")
        } catch {
            await etcd.stop()
            throw error
        }
        await etcd.stop()
    }
}
