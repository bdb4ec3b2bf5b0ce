import NIOCore
import NIOHPACK

/// The client's header blocks as they arrive, in a HEADERS frame and any CONTINUATION
/// frames after it (RFC 9113, 4.3 and 6.10), decoded with the connection's HPACK state:
/// nothing may come between a block's frames, a block is at most
/// ``HTTP2Limits/maxHeaderBlockBytes`` over at most ``HTTP2Limits/maxContinuationFrames``
/// frames, and one left waiting holds the most it may grow to of the connection's budget.
struct HTTP2HeaderBlocks {
    /// A whole header block.
    struct Block {
        let stream: UInt32
        let endStream: Bool
        /// Whether its HEADERS named the stream itself as the one it depends on.
        let selfDependent: Bool
        let fields: HPACKHeaders
        /// The number blocks that decode alike share (``HTTP2RecentBlocks``), nil for one
        /// that may have changed the HPACK table.
        let number: UInt64?
    }

    /// A header block whose CONTINUATION frames are still to come.
    private struct Pending {
        let stream: UInt32
        let endStream: Bool
        let selfDependent: Bool
        var fragments: ByteBuffer
        var frames = 1
    }

    private var pending: Pending?
    /// What the pending block holds of the budget (its fragments are slices that keep
    /// whole reads alive).
    private(set) var charge = 0
    private var recent = HTTP2RecentBlocks()
    private var decoder = HPACKDecoder(
        allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize, maxHeaderListSize: HTTP2Limits.maxHeaderListBytes
    )

    /// The stream of the block waiting for CONTINUATION frames, if one is.
    var waitingStream: UInt32? { pending?.stream }

    /// A HEADERS frame: the whole block when it ends it, else nil until its
    /// CONTINUATION frames came.
    mutating func headers(_ frame: HTTP2Wire.Frame, budget: ConnectionBudget) throws(HTTP2Wire.Violation) -> Block? {
        guard frame.stream != 0 else { throw .connection(.protocolError, "HEADERS on stream 0") }
        var frame = frame
        let dependency = try frame.removePadding(priority: true)
        let selfDependent = dependency == frame.stream
        let endStream = frame.has(HTTP2Wire.Flag.endStream)
        guard frame.has(HTTP2Wire.Flag.endHeaders) else {
            guard frame.payload.readableBytes <= HTTP2Limits.maxHeaderBlockBytes else { throw Self.tooLarge }
            try hold(budget)
            pending = Pending(stream: frame.stream, endStream: endStream, selfDependent: selfDependent, fragments: frame.payload)
            return nil
        }
        let (fields, number) = try decode(frame.payload)
        return Block(stream: frame.stream, endStream: endStream, selfDependent: selfDependent, fields: fields, number: number)
    }

    /// A CONTINUATION frame (the block's next, ``waitingStream`` checked by the caller).
    mutating func continuation(_ frame: HTTP2Wire.Frame, budget: ConnectionBudget) throws(HTTP2Wire.Violation) -> Block? {
        guard var block = pending, frame.stream == block.stream else {
            throw .connection(.protocolError, "a header block on stream \(pending?.stream ?? 0) was interrupted by another frame")
        }
        var fragment = frame.payload
        guard block.fragments.readableBytes + fragment.readableBytes <= HTTP2Limits.maxHeaderBlockBytes,
              block.frames < HTTP2Limits.maxContinuationFrames
        else { throw Self.tooLarge }
        pending = nil
        block.fragments.writeBuffer(&fragment)
        block.frames += 1
        guard frame.has(HTTP2Wire.Flag.endHeaders) else {
            pending = block
            return nil
        }
        release(budget)
        let (fields, number) = try decode(block.fragments)
        return Block(stream: block.stream, endStream: block.endStream, selfDependent: block.selfDependent, fields: fields, number: number)
    }

    /// Lets go of what a block still arriving holds (the connection ended).
    mutating func release(_ budget: ConnectionBudget) {
        budget.give(charge)
        charge = 0
    }

    private mutating func hold(_ budget: ConnectionBudget) throws(HTTP2Wire.Violation) {
        guard charge == 0 else { return }
        do {
            try budget.take(HTTP2Limits.maxHeaderBlockBytes)
        } catch {
            throw .connection(.enhanceYourCalm, "a header block in CONTINUATION frames while the server holds all it may for its clients")
        }
        charge = HTTP2Limits.maxHeaderBlockBytes
    }

    /// Decodes a whole block, whatever comes of it after, so the connection's HPACK state
    /// stays the client's; a block seen lately that cannot have changed it is not decoded
    /// again.
    private mutating func decode(_ block: ByteBuffer) throws(HTTP2Wire.Violation) -> (HPACKHeaders, UInt64?) {
        if let known = recent.fields(of: block) { return (known.fields, known.number) }
        var unread = block
        do {
            let fields = try decoder.decodeHeaders(from: &unread)
            return (fields, recent.decoded(block, to: fields))
        } catch {
            // The block may have changed the decoder's table only in part: the two ends no
            // longer agree on it, and nothing more can be read (RFC 9113, 4.3).
            throw .connection(.compressionError, "a header block that does not decode")
        }
    }

    private static var tooLarge: HTTP2Wire.Violation {
        .connection(
            .enhanceYourCalm,
            "a header block over \(HTTP2Limits.maxHeaderBlockBytes >> 10) KiB or \(HTTP2Limits.maxContinuationFrames) CONTINUATION frames"
        )
    }
}
