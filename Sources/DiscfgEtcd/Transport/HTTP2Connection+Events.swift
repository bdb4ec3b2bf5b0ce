import NIOCore
import NIOHPACK

extension HTTP2Connection {
    /// What a frame, or the end of a stream, means to the layer above.
    enum Event {
        /// A client opened stream `id` with a header block: the layer above
        /// ``accept(_:context:endStream:)``s it, answers it at once
        /// (``answerWithoutStream(_:_:requestEnded:now:)``), or resets it. Blocks with the
        /// same number decode to the same fields (``HTTP2RecentBlocks``).
        case opened(UInt32, HPACKHeaders, endStream: Bool, number: UInt64?)
        /// Bytes of the stream's request, and whether they end it.
        case data(Context, ByteBuffer, endStream: Bool)
        /// The client ended its side of the stream with trailers.
        case requestsEnded(Context)
        /// The stream's answer left whole: the stream is closed.
        case closed(Context)
        /// The stream ended before its answer did (reset by the client, for a breach of
        /// the protocol, past a timeout, or with the connection).
        case reset(Context)
    }

    /// Where the connection is in its life.
    enum Phase: Equatable {
        /// The client's preface, then its SETTINGS, have not come yet.
        case awaitingPreface, awaitingSettings
        case open
        /// GOAWAY sent for a graceful shutdown, or received: streams open now are
        /// finished, no new one is opened, and the connection closes once none is left.
        case draining
        /// GOAWAY sent for an error or idleness, or a wait ran out: nothing more is
        /// read, and the connection closes once what was framed left.
        case closing
        /// The socket closed.
        case closed
    }
}
