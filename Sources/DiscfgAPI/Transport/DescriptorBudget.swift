import DiscfgNetwork

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections each API of `discfg serve` may hold, within the process's file
/// descriptor limit (`RLIMIT_NOFILE`), read once at start-up.
///
/// Every connection is a descriptor, and so is everything else the server needs: the
/// store's files, the listening sockets, the event loops' own. When connections take
/// them all, nothing else works: accepts fail with `EMFILE`, the store cannot open a
/// file, and one API's idle clients lock the other's out. So the REST API and the etcd
/// API share one budget with ``reservedDescriptors`` kept apart: the REST API's
/// connections, with the ones it accepts only to refuse (``DiscfgNetwork/ConnectionCap``'s
/// accept limit), fit in its half of the rest and the etcd API's in the other half;
/// `--max-connections` is lowered to fit when the limit is too small for it.
public struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors kept for everything but connections: standard streams, the listening
    /// sockets, SQLite's database, journal and shared memory, DynamoDB's HTTP connections,
    /// the event loops' epoll and eventfd descriptors, an `exec`'d child's pipes.
    public static let reservedDescriptors = 128

    /// The soft `RLIMIT_NOFILE` the budget was made from.
    public let descriptors: Int
    /// Connections the REST API serves at once (its `--max-connections`).
    public let rest: Int
    /// Connections the etcd API serves at once; 0 when it is not served.
    public let etcd: Int
    /// Whether `requested` had to be lowered to fit.
    public let lowered: Bool

    /// The budget for `descriptors` (the soft limit), when `requested` connections are
    /// asked of each API and the etcd API is served or not.
    public init(descriptors: Int, requested: Int, servesEtcd: Bool) {
        self.descriptors = descriptors
        let forConnections = max(descriptors - Self.reservedDescriptors, 2)
        let restShare = servesEtcd ? forConnections / 2 : forConnections
        // The REST API accepts up to `limit + max(64, limit / 8)` before it stops
        // accepting (the ones past `limit` only to answer 503): the largest limit whose
        // accept limit fits its share.
        var restFits = restShare - max(64, restShare / 9)
        while restFits > 1, ConnectionCap.acceptLimit(for: restFits) > restShare { restFits -= 1 }
        rest = max(1, min(requested, restFits))
        // The etcd API closes one past its limit as soon as it is accepted: one more.
        etcd = servesEtcd ? max(1, min(requested, forConnections - restShare - 1)) : 0
        lowered = rest < requested || (servesEtcd && etcd < requested)
    }

    /// The process's soft descriptor limit, first raised to its hard limit (as Go's
    /// runtime, and so etcd, does at start-up): the soft limit is often a small default
    /// left for programs that call `select(2)`, which no part of discfg does.
    public static func raisedLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Self.resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Self.resource, &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is all ones.
        return limit.rlim_cur == rlim_t.max ? Int(Int32.max) : Int(clamping: limit.rlim_cur)
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
