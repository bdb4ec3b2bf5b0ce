import NIOCore

/// A header block this end sends, as the layer above describes it: the machine encodes
/// it, with the connection's HPACK encoder, when its turn comes on the wire (a stream's
/// trailers wait for its DATA, and HPACK's table must see blocks in the order they leave).
protocol HTTP2HeaderBlock {
    /// Writes the block's HPACK encoding.
    func encode(with encoder: inout ResponseHeaderEncoder, into buffer: inout ByteBuffer)
}

/// Where a stream is in its life (RFC 9113, 5.1), as a server sees it: it never pushes,
/// so a stream is never reserved, and it ends its side only with the answer's last frame
/// (END_STREAM on trailers, or RST_STREAM), which closes the stream.
enum HTTP2StreamState: Equatable {
    /// Above every stream the client used.
    case idle
    /// The client may still send on it.
    case open
    /// The client ended its side (END_STREAM); the answer may still be going.
    case halfClosedRemote
    /// Ended both ways, reset, or refused.
    case closed
}

/// One open stream: its windows, its answer's DATA waiting for them, its trailers once
/// decided, and the layer above's object for it (`context`), handed back with each event.
///
/// A class, held once by ``HTTP2Streams``: every frame reads a field or two of its
/// stream, and a struct in a dictionary is copied whole for each read (its queue, its
/// trailers and its context retained and released), which cost about 3,000 instructions
/// per call, where one allocation per stream costs a few hundred. It lives on its
/// connection's event loop, and nothing it calls touches it again, so its fields leave
/// out the runtime's check for overlapping accesses (as ``GRPCConnection``'s do).
final class HTTP2Stream<Context: AnyObject, Block: HTTP2HeaderBlock> {
    let id: UInt32
    let context: Context
    /// ``HTTP2StreamState/open`` or ``HTTP2StreamState/halfClosedRemote``.
    @exclusivity(unchecked) var state: HTTP2StreamState
    @exclusivity(unchecked) var windows: HTTP2StreamWindows
    /// Whether its answer's HEADERS left.
    @exclusivity(unchecked) var sentHeaders = false
    /// Answer DATA not yet sent, for want of window; made the first time one waits.
    @exclusivity(unchecked) var queued: CircularBuffer<QueuedData>?
    /// Since when the DATA at the head of `queued` has waited on a window with no byte
    /// of it sent; nil while nothing waits.
    @exclusivity(unchecked) var waitingSince: NIODeadline?
    /// The block that ends the answer, once decided; sent after `queued`.
    @exclusivity(unchecked) var trailers: Block?

    init(id: UInt32, context: Context, state: HTTP2StreamState, windows: HTTP2StreamWindows) {
        self.id = id
        self.context = context
        self.state = state
        self.windows = windows
    }

    var hasQueued: Bool { queued.map { !$0.isEmpty } ?? false }
}

/// Answer DATA waiting for the client's window: its bytes, the promise of its sending,
/// and what it holds of the connection's budget until it left.
struct QueuedData {
    var bytes: ByteBuffer
    let promise: EventLoopPromise<Void>?
    let charge: Int
}
