import DiscfgCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP connection speaking just enough HTTP/1.1 for tests of the server's edges: readers that
/// never read (a small receive buffer, so the server feels it at once) and one-shot
/// requests. Its blocking reads run on threads of their own (``BlockingCall``).
public struct LoopbackHTTP: Sendable {
    public let descriptor: Int32

    public init(port: Int, receiveBuffer: Int32? = nil) throws {
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

    public func send(_ data: Data) throws {
        var offset = 0
        while offset < data.count {
            let sent = data.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, data.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw DiscfgError(.unavailable, "send failed") }
            offset += sent
        }
    }

    /// Everything until the server closes the connection, or until nothing arrives for
    /// `seconds`.
    public func readToEnd(waiting seconds: Int = 60) async -> String {
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
    public func read(waiting seconds: Int) async -> String {
        await BlockingCall.run { blockingRead(waiting: seconds) }
    }

    private func blockingRead(waiting seconds: Int) -> String {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    }

    public func close() { Glibc.close(descriptor) }

    /// Closes the sending side only (`shutdown(SHUT_WR)`, as `nc -N` does after its input):
    /// the server reads the end of input and may still answer.
    public func shutdownWrite() { Glibc.shutdown(descriptor, Int32(SHUT_WR)) }

    /// `requestLine` (`"PUT /path"`) with `body` on a new connection; the whole reply.
    /// `host` is its `Host` header, `127.0.0.1:PORT` unless given.
    /// - Parameter waiting: how long the server may be silent, in seconds, before what
    ///   arrived is taken as the whole answer.
    public static func exchange(port: Int, _ requestLine: String, body: Data, headers: [String] = [], host: String? = nil, waiting: Int = 60) async throws -> String {
        try await BlockingCall.run {
            let connection = try LoopbackHTTP(port: port)
            defer { connection.close() }
            let extra = headers.map { $0 + "\r\n" }.joined()
            try connection.send(Data("\(requestLine) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\n\(extra)Content-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body)
            return connection.blockingReadToEnd(waiting: waiting)
        }
    }
}
