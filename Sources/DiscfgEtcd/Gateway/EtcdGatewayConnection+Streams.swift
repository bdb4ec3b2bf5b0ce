import Foundation
import GRPCCore
import NIOCore
import NIOHTTP1

/// Streaming answers: `POST /v3/watch` and `/v3/lease/keepalive`, whose body holds one
/// or more JSON requests and whose answer is one `{"result":…}` line per response,
/// chunked, as etcd's gateway writes them.
extension EtcdGatewayConnection {
    /// The most requests one body may hold.
    static let maxStreamRequests = 1_000

    /// Starts a streaming answer: the body's requests, read as a call of the route's
    /// method (`read`), go to it, and its responses out one line each.
    func stream(
        _ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ route: EtcdGateway.Route,
        _ read: @Sendable ([Data]) throws -> EtcdGateway.StreamingCall,
        json: Data, caller: EtcdCaller?, serverContext: ServerContext, held: Int, bound: LoopBoundGateway
    ) {
        let call: EtcdGateway.StreamingCall
        do {
            call = try read(try EtcdGateway.values(json, limit: Self.maxStreamRequests))
        } catch {
            refusalNote(head, route.method.descriptor)(error)
            return answerError(context, head, error, held: held)
        }
        give(held)
        do {
            try budget.take(GRPCConnection.streamingOverheadBytes)
        } catch {
            return answerError(context, head, GRPCConnection.overBudget(error), held: 0)
        }
        callHeld = GRPCConnection.streamingOverheadBytes
        var headers = HTTPHeaders([("content-type", "application/json")])
        if let corsOrigin { headers.add(contentsOf: EtcdGateway.corsHeaders(corsOrigin)) }
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
        endRequests = call.end
        let send: @Sendable (String) async throws -> Void = { json in try await bound.send(#"{"result":"# + json + "}\n") }
        task = Self.start(on: executor) {
            let failure = await Self.run(call, send, serverContext, as: caller)
            bound.onLoop { $0.endStream(head, failure) }
        }
    }

    /// Runs a streaming call as `caller` when the call has one; what it threw.
    private static func run(
        _ call: EtcdGateway.StreamingCall, _ send: @escaping @Sendable (String) async throws -> Void, _ context: ServerContext, as caller: EtcdCaller?
    ) async -> (any Error)? {
        do {
            if let caller { try await caller.bound { try await call.run(send, context) } } else { try await call.run(send, context) }
            return nil
        } catch {
            return error
        }
    }

    /// Writes one line of a streaming answer; done once it left for the client.
    func writeLine(_ line: String, on loop: any EventLoop) -> EventLoopFuture<Void> {
        guard let context, context.channel.isActive else { return loop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        let bytes = context.channel.allocator.buffer(string: line)
        return guarded(context, context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(bytes)))))
    }

    /// Ends a streaming answer: a failure as etcd's gateway writes one in a stream, then
    /// the last chunk.
    func endStream(_ head: HTTPRequestHead, _ failure: (any Error)?) {
        task = nil
        endRequests?(nil)
        endRequests = nil
        release()
        guard let context, context.channel.isActive else { return }
        if let failure, !(failure is CancellationError) {
            let (code, message) = GRPCStatus.status(failure)
            let line = EtcdGateway.streamErrorLine(code: code, message: message) + "\n"
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: line)))), promise: nil)
        }
        let written = guarded(context, context.writeAndFlush(wrapOutboundOut(.end(nil))))
        if closing || !head.isKeepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        } else {
            armTimer(context, answering: false)
        }
    }
}

extension EtcdGateway {
    /// The JSON values one after another in `body` (etcd's gateway reads a streaming
    /// call's requests so), at most `limit` of them; none for an empty body.
    static func values(_ body: Data, limit: Int) throws(RPCError) -> [Data] {
        let bytes = [UInt8](body)
        var values: [Data] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                index += 1
                continue
            }
            guard values.count < limit else {
                throw RPCError(code: .invalidArgument, message: "the request body holds more than \(limit) requests")
            }
            let start = index
            var depth = 0, inString = false, escaped = false
            scan: while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if inString {
                    if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                    continue
                }
                switch byte {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth <= 0 { break scan }
                case 0x20, 0x0A, 0x0D, 0x09:
                    if depth == 0 { break scan }
                default: break
                }
            }
            values.append(Data(bytes[start..<index]))
        }
        return values
    }
}
