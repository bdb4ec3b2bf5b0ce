#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells whether the current thread's stack still has room, so recursion can stop with an
/// error instead of crashing the process on a thread with a small stack.
///
/// Swift has no stack overflow recovery; a depth limit alone cannot know how large a thread's
/// stack is (8 MiB for a main thread, 512 KiB for some pools) or how large frames are (several
/// times larger in debug builds), so evaluation also checks the address of a local against the
/// stack's low end, keeping ``reserve`` bytes free.
struct StackGuard {
    /// Bytes kept free below the deepest evaluation frame.
    static let reserve: UInt = 256 * 1024
    private let lowest: UInt

    /// Reads the bounds of the calling thread's stack; checks always pass where they cannot be read.
    init() {
        #if canImport(Glibc) || canImport(Musl)
        var attributes = pthread_attr_t()
        var low: UnsafeMutableRawPointer?
        var size = 0
        // pthread_getattr_np is a GNU extension the Glibc module does not export; look it up by name.
        typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        if let symbol = dlsym(nil, "pthread_getattr_np"),
            unsafeBitCast(symbol, to: GetAttributes.self)(pthread_self(), &attributes) == 0
        {
            pthread_attr_getstack(&attributes, &low, &size)
            pthread_attr_destroy(&attributes)
        }
        lowest = low.map { UInt(bitPattern: $0) + Self.reserve } ?? 0
        #elseif canImport(Darwin)
        let top = UInt(bitPattern: pthread_get_stackaddr_np(pthread_self()))
        let size = UInt(pthread_get_stacksize_np(pthread_self()))
        lowest = top > size + Self.reserve ? top - size + Self.reserve : 0
        #else
        lowest = 0
        #endif
    }

    /// Whether a caller may recurse further on this thread.
    var hasRoom: Bool {
        var marker: UInt8 = 0
        return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) } > lowest
    }
}
