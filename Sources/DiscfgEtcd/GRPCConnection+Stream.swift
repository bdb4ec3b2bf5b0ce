import NIOCore

/// A connection's request streams: what each holds while it is open.
extension GRPCConnection {
    /// A request stream in progress, and its answer until the last of it left.
    final class Stream {
        let id: UInt32
        let method: GRPCMethod
        /// What the stream's requests hold of the connection's and the server's budgets.
        let bytes: StreamBytes
        /// What the stream's receive window is owed of the bytes read on it.
        var credit = WindowCredit()
        /// Bytes the client may still send on the stream before a WINDOW_UPDATE.
        var receiveWindow = GRPCConnection.windowBytes
        /// Bytes of DATA this end may still send on the stream.
        var sendWindow: Int
        /// Bytes of request messages not yet whole.
        var pending: ByteBuffer
        /// A unary method's request message.
        var request: [UInt8]?
        /// A streaming method's request messages.
        var requests: AsyncThrowingStream<[UInt8], any Error>.Continuation?
        var task: Task<Void, Never>?
        /// Whether the client ended its side (END_STREAM).
        var requestsEnded = false
        var sentHeaders = false
        /// Response DATA not yet sent, for want of window: framed messages, each with
        /// the promise of its sending and what it holds of the budgets.
        var queued = CircularBuffer<QueuedMessage>()
        /// Since when the answer at the head of `queued` has waited on a flow-control
        /// window with no byte of it sent; nil while nothing waits.
        var waitingSince: NIODeadline?
        /// Since when a request message not yet whole has been arriving; nil when none is.
        var messageSince: NIODeadline?
        /// The trailers that end the answer, once the method is done; sent after `queued`.
        var trailers: ResponseBlock?

        init(id: UInt32, method: GRPCMethod, bytes: StreamBytes, pending: ByteBuffer, sendWindow: Int) {
            self.id = id
            self.method = method
            self.bytes = bytes
            self.pending = pending
            self.sendWindow = sendWindow
        }
    }

    /// A response message waiting for the client's window.
    struct QueuedMessage {
        var bytes: ByteBuffer
        let promise: EventLoopPromise<Void>?
        /// What it holds of the connection's and the server's budgets.
        let charge: Int
    }
}
