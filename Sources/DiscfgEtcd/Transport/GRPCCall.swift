import NIOCore

/// One gRPC call on a connection's stream, as the adapter keeps it: its method, its
/// request messages as they arrive, its task, and what it holds of the budgets. The
/// HTTP/2 machine holds it with the stream (``HTTP2Connection``'s `Context`) and hands
/// it back with each event; it lives on the connection's event loop, where no two
/// accesses to a field can overlap, so its fields leave out the runtime's check for
/// overlapping accesses (as ``GRPCConnection``'s do).
final class GRPCCall {
    let id: UInt32
    let method: GRPCMethod
    /// What the call's requests hold of the connection's and the server's budgets.
    let bytes: StreamBytes
    /// The client's `grpc-timeout`, and the instant on the loop's clock it ends.
    let timeout: Duration?
    let deadline: NIODeadline?
    /// Whom the call runs as: nil on a server without authentication.
    let caller: EtcdCaller?
    /// The client's deadline for the pipeline, and whether the call may still be cancelled.
    let hold: GRPCCallHold
    /// Bytes of request messages not yet whole.
    @exclusivity(unchecked) var pending: ByteBuffer
    /// A unary method's request message.
    @exclusivity(unchecked) var request: [UInt8]?
    /// A streaming method's request messages.
    @exclusivity(unchecked) var requests: AsyncThrowingStream<[UInt8], any Error>.Continuation?
    @exclusivity(unchecked) var task: Task<Void, Never>?
    /// Since when a request message not yet whole has been arriving; nil when none is.
    @exclusivity(unchecked) var messageSince: NIODeadline?
    /// Whether the call's status is decided (its trailers framed or waiting for its DATA).
    @exclusivity(unchecked) var finished = false

    var isStreaming: Bool { method.isStreaming }

    init(id: UInt32, method: GRPCMethod, bytes: StreamBytes, pending: ByteBuffer, timeout: Duration?, deadline: NIODeadline?, caller: EtcdCaller? = nil) {
        self.id = id
        self.method = method
        self.bytes = bytes
        self.pending = pending
        self.timeout = timeout
        self.deadline = deadline
        self.caller = caller
        hold = GRPCCallHold(timeout: timeout)
    }

    /// Ends what a call that ended early was doing: its method (unless a write of it has
    /// begun, which runs to its end), its requests.
    func drop() {
        if hold.cut() { task?.cancel() }
        requests?.finish(throwing: CancellationError())
        bytes.end()
    }
}
