import DiscfgCore
import DiscfgTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `discfg serve` holds bounded memory however slowly its watchers read.
@Suite("CLI: serve memory under slow watchers")
struct ServeMemoryTests {
    /// The bound on the server's peak resident memory (VmHWM). Measured on Linux x86-64
    /// with a debug build: 95 MiB; with a backlog too large to bind
    /// (`--stream-backlog 1048576`, as streams were before they were bounded) the same run
    /// reaches 613 MiB.
    static let peakRSSBound = 160 * 1024 * 1024

    @Test("100 event-stream readers that never read, and 1,000 writes, keep serve's peak RSS bounded", .timeLimit(.minutes(3)))
    func slowReaders() async throws {
        let cli = try CLIRunner()
        defer { cli.cleanUp() }
        let (server, port) = try await ServeTests.start(cli, ["--stream-backlog", "256"])
        try await withServer(server) { server in
            #expect(try await LoopbackHTTP.exchange(port: port, "PUT /v1/m", body: Data()).hasPrefix("HTTP/1.1 201"))

            var readers: [LoopbackHTTP] = []
            defer { readers.forEach { $0.close() } }
            for _ in 0..<100 {
                let reader = try LoopbackHTTP(port: port, receiveBuffer: 4096)
                try reader.send(Data("GET /v1/m/watch?fromRevision=1&heartbeat=3600 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8))
                readers.append(reader)
            }
            // 1,000 changes of 8 KiB: 8 MB of events for each reader, 800 MB for all.
            let value = Data(String(repeating: "v", count: 8 * 1024).utf8)
            for index in 0..<1000 {
                let reply = try await LoopbackHTTP.exchange(port: port, "PUT /v1/m/keys/k\(index)", body: value)
                if !reply.hasPrefix("HTTP/1.1 201") {
                    Issue.record("write \(index) answered \(reply.prefix(200))")
                    break
                }
            }
            try await Task.sleep(for: .seconds(2))
            let status = try String(contentsOfFile: "/proc/\(server.pid)/status", encoding: .utf8)
            let peak = try #require(Self.kilobytes("VmHWM", in: status)) * 1024
            let now = try #require(Self.kilobytes("VmRSS", in: status)) * 1024
            print("serve with 100 slow readers after 1,000 writes of 8 KiB: peak RSS \(peak / 1_048_576) MiB, now \(now / 1_048_576) MiB")
            #expect(peak < Self.peakRSSBound, "peak RSS \(peak) bytes")
            #expect(server.isRunning)
        }
    }

    /// A `/proc/PID/status` field in kB.
    static func kilobytes(_ field: String, in status: String) -> Int? {
        status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            .flatMap { $0.split(separator: " ").dropFirst().first }
            .flatMap { Int($0) }
    }
}

/// A loopback TCP connection speaking just enough HTTP/1.1 for this test: readers that
/// never read (a small receive buffer, so the server feels it at once) and one-shot
/// requests. Its blocking reads run on threads of their own (``BlockingCall``).
struct LoopbackHTTP: Sendable {
    let descriptor: Int32

    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw DiscfgError(.unavailable, "socket failed") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw DiscfgError(.unavailable, "cannot connect to 127.0.0.1:\(port)")
        }
    }

    func send(_ data: Data) throws {
        var offset = 0
        while offset < data.count {
            let sent = data.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, data.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw DiscfgError(.unavailable, "send failed") }
            offset += sent
        }
    }

    /// Everything until the server closes the connection, or until nothing arrives for
    /// `seconds`.
    func readToEnd(waiting seconds: Int = 60) async -> String {
        await BlockingCall.run { blockingReadToEnd(waiting: seconds) }
    }

    private func blockingReadToEnd(waiting seconds: Int) -> String {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// What arrives within `seconds` (at most one read); empty when nothing does.
    func read(waiting seconds: Int) async -> String {
        await BlockingCall.run { blockingRead(waiting: seconds) }
    }

    private func blockingRead(waiting seconds: Int) -> String {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    }

    func close() { Glibc.close(descriptor) }

    /// `requestLine` (`"PUT /path"`) with `body` on a new connection; the whole reply.
    static func exchange(port: Int, _ requestLine: String, body: Data, headers: [String] = []) async throws -> String {
        try await BlockingCall.run {
            let connection = try LoopbackHTTP(port: port)
            defer { connection.close() }
            let extra = headers.map { $0 + "\r\n" }.joined()
            try connection.send(Data("\(requestLine) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(extra)Content-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body)
            return connection.blockingReadToEnd(waiting: 60)
        }
    }
}
