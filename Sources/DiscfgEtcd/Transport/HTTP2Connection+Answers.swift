import NIOCore

/// The layer above's answers: HEADERS, DATA within the windows, trailers, and what
/// was framed for the handler to write.
extension HTTP2Connection {
    /// Writes stream `id`'s answer HEADERS (not flow-controlled); false when it is gone.
    mutating func sendHeaders(_ block: Block, on id: UInt32) -> Bool {
        streams.sendHeaders(block, on: id, output: &output)
    }

    /// Sends `length` bytes of DATA on stream `id`, which `write` writes, within the
    /// windows or once they open; `promise` completes, and `charge` goes back to the
    /// budget, once they left. False when the stream is gone.
    mutating func sendData(
        on id: UInt32, length: Int, charge: Int, promise: EventLoopPromise<Void>?, now: @autoclosure () -> NIODeadline,
        _ write: (inout ByteBuffer) -> Void
    ) -> Bool {
        switch streams.sendData(on: id, length: length, charge: charge, promise: promise, flow: &flow, output: &output, write: write) {
        case .sent: return true
        case .queued:
            sendQueued(id, now: now())
            return true
        case .streamGone: return false
        }
    }

    /// Ends stream `id`'s answer with `trailers`, sent after its DATA; the stream closes
    /// then (``Event/closed(_:)``). False when it is gone or its end was decided.
    @discardableResult
    mutating func finish(_ id: UInt32, trailers: Block, now: @autoclosure () -> NIODeadline) -> Bool {
        guard streams.setTrailers(trailers, on: id) else { return false }
        sendQueued(id, now: now())
        return true
    }

    /// Answers stream `id`, which the layer above did not accept, with one header block
    /// that ends it (and RST_STREAM `NO_ERROR` when the client did not end its side).
    mutating func answerWithoutStream(_ id: UInt32, _ block: Block, requestEnded: Bool, now: @autoclosure () -> NIODeadline) {
        // A call answered at once is a call all the same: the idle clock starts again,
        // as it would after a stream that opened and ended.
        if streams.isEmpty { timers.idle(since: now()) }
        output.headers(block, on: id, endStream: true)
        if !requestEnded { output.reset(id, .noError) }
    }

    /// Sends what stream `id` has waiting that the windows allow; once its answer left
    /// whole, the stream closes (``Event/closed(_:)``).
    mutating func sendQueued(_ id: UInt32, now: @autoclosure () -> NIODeadline) {
        guard let stream = streams.sendQueued(id, now: now(), flow: &flow, output: &output) else { return }
        if streams.isEmpty { timers.idle(since: now()) }
        ended.append(.closed(stream.context))
    }

    /// What was framed since the last call, with the promises of the answers in it and
    /// what they hold of the budget until written.
    mutating func takeOutput(allocator: ByteBufferAllocator) -> (bytes: ByteBuffer, promises: [EventLoopPromise<Void>], charge: Int)? {
        output.take(allocator: allocator)
    }

    /// Asks for `promise` to complete once what is framed now was written.
    mutating func whenWritten(_ promise: EventLoopPromise<Void>) {
        output.whenWritten(promise)
    }
}
