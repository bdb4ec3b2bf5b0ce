import AsyncHTTPClient
import Crypto
import DiscfgAWS
import DiscfgCore
import DiscfgWire
import Foundation
import NIOCore
import NIOHTTP1

/// One change as notifications carry it: EventBridge's `detail` and a webhook's body.
struct ChangeNotice: Encodable {
    var config: String
    var event: EventDocument
    /// For a change of a deployment's record: what happened to the deployment.
    var deployment: DeploymentNotice?
    /// Values were left out to fit EventBridge's entry limit; read the change by revision.
    var truncated: Bool?

    init(config: ConfigName, event: Event) {
        self.config = config.rawValue
        self.event = EventDocument(event)
        deployment = DeploymentNotice(event)
    }

    /// `discfg.deployment` for a change of a deployment's record, else `discfg.change`: the
    /// EventBridge detail-type and the webhook's `X-Discfg-Event`, so a rule or a receiver
    /// can take deployments alone.
    var kind: String { deployment == nil ? "discfg.change" : "discfg.deployment" }

    func json() throws -> Data { try JSONEncoder.discfg(pretty: false).encode(self) }

    /// The notice without its values, for a receiver to fetch by revision.
    var withoutValues: ChangeNotice {
        var copy = self
        copy.event.item?.value = ""
        copy.event.prevItem?.value = ""
        copy.event.item?.encoding = nil
        copy.event.prevItem?.encoding = nil
        copy.truncated = true
        return copy
    }
}

/// What a change of a deployment's record says happened: `STARTED` (a new running
/// record), or the transition it recorded (`PAUSED`, `RESUMED`, `ROLLING_BACK`,
/// `ROLLED_BACK`, `COMPLETE`, `REVERTED`), by whom and why. The deletion of a running
/// record, which ends it in the same change as the ended record's write, carries none.
struct DeploymentNotice: Encodable, Equatable {
    var id: String
    var step: String
    var by: String
    var reason: String

    init?(_ event: Event) {
        guard event.kind == .put, let item = event.item,
              DeploymentKeys.running.contains(event.key) || DeploymentKeys.ended.contains(event.key),
              let deployment = try? Deployment(record: item)
        else { return nil }
        id = deployment.id
        if let last = deployment.transitions.last {
            step = last.state.rawValue
            by = last.by
            reason = last.reason
        } else {
            step = "STARTED"
            by = deployment.startedBy
            reason = deployment.message
        }
    }
}

/// A delivery that did not happen, and whether trying again can help.
struct DeliveryFailure: Error, CustomStringConvertible {
    var description: String
    var permanent: Bool
}

/// Sends changes to an EventBridge bus with `PutEvents`.
struct EventBridgeSender: Sendable {
    let client: AWSJSONClient

    /// EventBridge refuses entries over 256 KB; values are dropped above this.
    static let maxDetailBytes = 240_000
    static let maxEntriesPerCall = 10

    private struct Entry: Encodable {
        var Source = "discfg"
        var DetailType: String
        var Detail: String
        var EventBusName: String
        var Time: Double
        var Resources: [String] = []
    }

    private struct Input: Encodable {
        var Entries: [Entry]
    }

    private struct Output: Decodable {
        struct Result: Decodable {
            var EventId: String?
            var ErrorCode: String?
            var ErrorMessage: String?
        }

        var FailedEntryCount: Int?
        var Entries: [Result]?
    }

    /// Puts `changes` (in order) on `bus`; returns how many of them, from the front, went out.
    func send(_ changes: [(ConfigName, Event)], bus: String) async throws -> Int {
        var entries: [Entry] = []
        for (config, event) in changes {
            let notice = ChangeNotice(config: config, event: event)
            var detail = try notice.json()
            if detail.count > Self.maxDetailBytes { detail = try notice.withoutValues.json() }
            entries.append(Entry(
                DetailType: notice.kind, Detail: String(decoding: detail, as: UTF8.self), EventBusName: bus,
                Time: Double(event.at.milliseconds) / 1000
            ))
        }
        let output: Output
        do {
            output = try await client.send(operation: "PutEvents", input: Input(Entries: entries), as: Output.self)
        } catch let error as AWSError {
            throw DeliveryFailure(description: "EventBridge PutEvents on \(bus) failed: \(error)", permanent: false)
        }
        let results = output.Entries ?? []
        if let failed = results.firstIndex(where: { $0.ErrorCode != nil }) {
            let result = results[failed]
            throw PartialDelivery(
                delivered: failed,
                failure: DeliveryFailure(description: "EventBridge refused an entry on \(bus): \(result.ErrorCode ?? "") \(result.ErrorMessage ?? "")", permanent: false)
            )
        }
        return entries.count
    }
}

/// Some entries of a batch went out, then one failed.
struct PartialDelivery: Error {
    var delivered: Int
    var failure: DeliveryFailure
}

/// Posts changes to a webhook, signed with HMAC-SHA256 when the target has a secret.
struct WebhookSender: Sendable {
    let http: HTTPClient
    /// Where deliveries may go, checked on the URL and on the addresses it resolves to.
    let policy: WebhookPolicy
    var timeout: TimeAmount = .seconds(10)

    /// `X-Discfg-Signature` for a body sent at `timestamp`: `sha256=` and the hex
    /// HMAC-SHA256 of `"<timestamp>.<body>"`.
    static func signature(secret: String, timestamp: String, body: Data) -> String {
        var message = Data(timestamp.utf8)
        message.append(UInt8(ascii: "."))
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + Hex.encode(mac)
    }

    /// The addresses `host` resolves to now (itself when it is a literal).
    static func resolve(_ host: String) -> [IPAddress] {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if let literal = IPAddress(bare) { return [literal] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(bare, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            if let socket = current.pointee.ai_addr {
                switch Int32(current.pointee.ai_family) {
                case AF_INET:
                    socket.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                        addresses.append(IPAddress(bytes: withUnsafeBytes(of: v4.pointee.sin_addr) { Array($0) }))
                    }
                case AF_INET6:
                    socket.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                        addresses.append(IPAddress(bytes: withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) }))
                    }
                default: break
                }
            }
            node = current.pointee.ai_next
        }
        return addresses
    }

    /// Posts one change; throws a ``DeliveryFailure`` saying whether a retry can help.
    func send(_ config: ConfigName, _ event: Event, url: String, secret: String?) async throws {
        do {
            try policy.check(url: url)
            if let host = URL(string: url)?.host {
                try policy.check(addresses: Self.resolve(host), of: url)
            }
        } catch let error as DiscfgError {
            throw DeliveryFailure(description: "refused to deliver: \(error.message)", permanent: true)
        }
        let notice = ChangeNotice(config: config, event: event)
        let body = try notice.json()
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "discfg-notifier")
        request.headers.add(name: "X-Discfg-Event", value: notice.kind)
        request.headers.add(name: "X-Discfg-Delivery", value: "\(config.rawValue)/\(event.revision.rawValue)")
        request.headers.add(name: "X-Discfg-Timestamp", value: timestamp)
        if let secret { request.headers.add(name: "X-Discfg-Signature", value: Self.signature(secret: secret, timestamp: timestamp, body: body)) }
        request.body = .bytes(ByteBuffer(data: body))
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: timeout)
            _ = try? await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw DeliveryFailure(description: "webhook \(url) could not be reached: \(error)", permanent: false)
        }
        let status = Int(response.status.code)
        if (200..<300).contains(status) { return }
        throw DeliveryFailure(
            description: "webhook \(url) answered \(status) for \(config)@\(event.revision)",
            permanent: (400..<500).contains(status) && status != 408 && status != 429
        )
    }
}
