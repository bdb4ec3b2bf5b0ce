import DiscfgSignals
import DiscfgTestSupport
import Foundation
import Testing

/// ``HealthProbe`` against a real loopback endpoint: the status decides, a redirect is
/// followed only on its own origin, a body is never read, and nothing outlasts the timeout.
@Suite("Health URL probe")
struct HealthProbeTests {
    @Test("2xx is healthy; 500 and 503 are unhealthy with their status")
    func statuses() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let probe = HealthProbe()
            #expect(await probe.read("\(peer.base)/status/200") == .healthy)
            #expect(await probe.read("\(peer.base)/status/204") == .healthy)
            #expect(await probe.read("\(peer.base)/status/500") == .unhealthy("the health URL \"\(peer.base)/status/500\" answered 500 Internal Server Error"))
            #expect(await probe.read("\(peer.base)/status/503") == .unhealthy("the health URL \"\(peer.base)/status/503\" answered 503 Service Unavailable"))
            try await probe.shutdown()
        }
    }

    @Test("a redirect on the same origin is followed; one to another host is not, and says where it pointed")
    func redirects() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let probe = HealthProbe()
            #expect(await probe.read("\(peer.base)/redirect?to=/status/204") == .healthy)
            #expect(await probe.read("\(peer.base)/redirect?to=\(peer.base)/status/503") == .unhealthy("the health URL \"\(peer.base)/redirect?to=\(peer.base)/status/503\" answered 503 Service Unavailable"))
            let elsewhere = "http://localhost:\(peer.port)/status/200"
            #expect(await probe.read("\(peer.base)/redirect?to=\(elsewhere)") == .unhealthy(
                "the health URL \"\(peer.base)/redirect?to=\(elsewhere)\" answered 301, a redirect to \"\(elsewhere)\" on another origin, which is not followed"))
            let loop = "\(peer.base)/redirect?to=/redirect"
            #expect(await probe.read(loop) == .unhealthy("the health URL \"\(loop)\" redirected more than 3 times"))
            try await probe.shutdown()
        }
    }

    @Test("a 200 with a body of 100 MB is healthy at its head: the body is not read, and its connection is closed")
    func hugeBodyNotRead() async throws {
        try await withServer(try HugeBodyPort()) { huge in
            let probe = HealthProbe()
            #expect(await probe.read("http://127.0.0.1:\(huge.port)/health") == .healthy)
            // The probe is still open: its connection closed because the body was dropped.
            let sent = await huge.bytesSent()
            // What the socket buffers of the two ends hold, nothing more.
            #expect(sent < 1 << 20)
            try await probe.shutdown()
        }
    }

    @Test("a server that takes the connection and never answers is unhealthy when the timeout passes, not later")
    func silentServer() async throws {
        try await withServer(try SilentPort()) { silent in
            let probe = HealthProbe(configuration: .init(timeout: .milliseconds(400)))
            let url = "http://127.0.0.1:\(silent.port)/health"
            let started = ContinuousClock.now
            #expect(await probe.read(url) == .unhealthy("the health URL \"\(url)\" did not answer within 400 ms"))
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(400))
            #expect(elapsed < .seconds(3))
            try await probe.shutdown()
        }
    }

    @Test("a probe cancelled before it knows is unknown, not unhealthy: a server shutting down rolls nothing back")
    func cancelledProbe() async throws {
        try await withServer(try SilentPort()) { silent in
            let probe = HealthProbe(configuration: .init(timeout: .seconds(60)))
            let url = "http://127.0.0.1:\(silent.port)/health"
            let reading = Task { await probe.read(url) }
            reading.cancel()
            #expect(await reading.value == .unknown("the health URL \"\(url)\" was not read: the reading was cancelled"))
            try await probe.shutdown()
        }
    }

    @Test("a closed port is unhealthy at once: the connection was refused")
    func refused() async throws {
        let url = "http://127.0.0.1:\(try MotoServer.freeLoopbackPort())/health"
        let probe = HealthProbe()
        let started = ContinuousClock.now
        #expect(await probe.read(url) == .unhealthy("the health URL \"\(url)\" could not be reached: connection refused"))
        #expect(ContinuousClock.now - started < .seconds(2))
        try await probe.shutdown()
    }

    @Test("the reader probes every URL signal, once each, beside its alarms")
    func readerProbesURLs() async throws {
        try await withServer(try await SignalPeer.start()) { peer in
            let reader = SignalReader(alarms: .unavailable("CloudWatch alarms cannot be read: not in this test"))
            let ok = "\(peer.base)/status/200", failing = "\(peer.base)/status/503"
            let readings = await reader.read([.http(ok), .http(failing), .http(ok), .alarm("a")])
            #expect(readings == [
                .http(ok): .healthy,
                .http(failing): .unhealthy("the health URL \"\(failing)\" answered 503 Service Unavailable"),
                .alarm("a"): .unknown("CloudWatch alarms cannot be read: not in this test"),
            ])
            await reader.shutdown()
        }
    }
}
