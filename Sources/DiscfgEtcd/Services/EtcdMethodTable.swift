import DiscfgService
import GRPCCore

/// The etcd API's methods by request path (`/etcdserverpb.KV/Range`): each method the
/// generated server code declares (every service's `Method.descriptors`, made by
/// `scripts/generate-etcd-protos`), bound to its service's handler and to the action its
/// calls are (``DiscfgService/Action/Kind``), which says the role they need and what
/// they reach, as it does for every face.
///
/// The generated declarations are the one list of what is served: a binding must name
/// a declared method as the kind it is declared (unary or bidirectional streaming), and
/// every declared method must be bound, or the server does not start
/// (``problems(_:)``). A method added to the protos is then either served or refused
/// out loud, never missing from the table unnoticed. etcd's `Auth` calls discfg does not
/// serve (user and role management) are bound apart, to a refusal naming `discfg token`
/// (``EtcdAuthService/refused``), and `Maintenance.Snapshot` to one naming `discfg export`
/// (``EtcdMaintenanceService/refused``).
enum EtcdMethodTable {
    /// Every method the generated server code declares.
    static var declared: [MethodDescriptor] {
        Etcdserverpb_KV.Method.descriptors + Etcdserverpb_Watch.Method.descriptors + Etcdserverpb_Lease.Method.descriptors
            + Etcdserverpb_Maintenance.Method.descriptors + Etcdserverpb_Cluster.Method.descriptors + Etcdserverpb_Auth.Method.descriptors
    }

    /// The table of the services' methods, each call's audit line noted in `audit`.
    static func methods(
        kv: EtcdKVService, lease: EtcdLeaseService, watch: EtcdWatchService,
        maintenance: EtcdMaintenanceService, cluster: EtcdClusterService, auth: EtcdAuthService, audit: EtcdAudit = EtcdAudit(trail: nil, config: "")
    ) -> [String: GRPCMethod] {
        typealias KV = Etcdserverpb_KV.Method
        typealias Lease = Etcdserverpb_Lease.Method
        typealias Maintenance = Etcdserverpb_Maintenance.Method
        let bound: [GRPCMethod] = [
            .unary(KV.Range.descriptor, .range) { request, context in
                try await audit.call(KV.Range.descriptor, key: request.key, rangeEnd: request.rangeEnd) { try await kv.range(request: request, context: context) }
            },
            .unary(KV.Put.descriptor, .set) { request, context in
                try await audit.call(KV.Put.descriptor, key: request.key, revision: { $0.header.revision }) { try await kv.put(request: request, context: context) }
            },
            .unary(KV.DeleteRange.descriptor, .delete) { request, context in
                try await audit.call(KV.DeleteRange.descriptor, key: request.key, rangeEnd: request.rangeEnd, revision: { $0.deleted > 0 ? $0.header.revision : nil }) {
                    try await kv.deleteRange(request: request, context: context)
                }
            },
            .unary(KV.Txn.descriptor, .txn, check: EtcdTxnShape.check) { request, context in
                try await audit.call(KV.Txn.descriptor, revision: { $0.changeRevision }) { try await kv.txn(request: request, context: context) }
            },
            .unary(KV.Compact.descriptor, .compact) { request, context in
                try await audit.call(KV.Compact.descriptor) { try await kv.compact(request: request, context: context) }
            },
            .bidirectional(Etcdserverpb_Watch.Method.Watch.descriptor, .watch) { requests, responses, context in
                try await audit.call(Etcdserverpb_Watch.Method.Watch.descriptor) { try await watch.watch(request: requests, response: responses, context: context) }
            },
            .unary(Lease.LeaseGrant.descriptor, .leaseGrant) { request, context in
                try await audit.call(Lease.LeaseGrant.descriptor) { try await lease.leaseGrant(request: request, context: context) }
            },
            .unary(Lease.LeaseRevoke.descriptor, .leaseRevoke) { request, context in
                try await audit.call(Lease.LeaseRevoke.descriptor) { try await lease.leaseRevoke(request: request, context: context) }
            },
            .bidirectional(Lease.LeaseKeepAlive.descriptor, .leaseKeepAlive) { requests, responses, context in
                try await audit.call(Lease.LeaseKeepAlive.descriptor) { try await lease.leaseKeepAlive(request: requests, response: responses, context: context) }
            },
            .unary(Lease.LeaseTimeToLive.descriptor, .leaseTimeToLive) { request, context in
                try await audit.call(Lease.LeaseTimeToLive.descriptor) { try await lease.leaseTimeToLive(request: request, context: context) }
            },
            .unary(Lease.LeaseLeases.descriptor, .leaseList) { request, context in
                try await audit.call(Lease.LeaseLeases.descriptor) { try await lease.leaseLeases(request: request, context: context) }
            },
            .unary(Maintenance.Status.descriptor, .status) { request, context in
                try await audit.call(Maintenance.Status.descriptor) { try await maintenance.status(request: request, context: context) }
            },
            // Listing alarms is a status read; disarming one is maintenance, judged
            // again as such when the call runs.
            .unary(Maintenance.Alarm.descriptor, .status) { request, context in
                try await audit.call(Maintenance.Alarm.descriptor) { try await maintenance.alarm(request: request, context: context) }
            },
            .unary(Maintenance.Defragment.descriptor, .maintenance) { request, context in
                try await audit.call(Maintenance.Defragment.descriptor) { try await maintenance.defragment(request: request, context: context) }
            },
            .unary(Maintenance.Hash.descriptor, .maintenance) { request, context in
                try await audit.call(Maintenance.Hash.descriptor) { try await maintenance.hash(request: request, context: context) }
            },
            .unary(Maintenance.HashKV.descriptor, .maintenance) { request, context in
                try await audit.call(Maintenance.HashKV.descriptor) { try await maintenance.hashKV(request: request, context: context) }
            },
            .unary(Maintenance.MoveLeader.descriptor, .maintenance) { request, context in
                try await audit.call(Maintenance.MoveLeader.descriptor) { try await maintenance.moveLeader(request: request, context: context) }
            },
            .unary(Etcdserverpb_Cluster.Method.MemberList.descriptor, .memberList) { request, context in
                try await audit.call(Etcdserverpb_Cluster.Method.MemberList.descriptor) { try await cluster.memberList(request: request, context: context) }
            },
            .unary(Etcdserverpb_Auth.Method.Authenticate.descriptor, .authenticate) { request, context in
                try await audit.authenticate(user: request.name) { try await auth.authenticate(request: request, context: context) }
            },
        ]
        let problems = problems(bound)
        precondition(problems.isEmpty, "the etcd API's method table differs from the generated server code: \(problems.joined(separator: "; "))")
        return Dictionary(uniqueKeysWithValues: (bound + EtcdAuthService.refused + EtcdMaintenanceService.refused).map { (path($0.descriptor), $0) })
    }

    /// How `bound` differs from ``declared``: a method bound twice, not declared, bound
    /// as another kind than declared, or declared and not bound. Empty when none.
    static func problems(_ bound: [GRPCMethod], declared: [MethodDescriptor] = declared) -> [String] {
        var problems: [String] = []
        var seen = Set<String>()
        let declaredByPath = Dictionary(declared.map { (path($0), $0) }, uniquingKeysWith: { first, _ in first })
        for method in bound {
            let path = path(method.descriptor)
            guard seen.insert(path).inserted else {
                problems.append("\(path) is bound twice")
                continue
            }
            guard let declaration = declaredByPath[path] else {
                problems.append("\(path) is not declared")
                continue
            }
            let kind: MethodDescriptor.RPCType = switch method.kind {
            case .unary: .unary
            case .bidirectional: .bidirectionalStreaming
            }
            if let declaredKind = declaration.type, declaredKind != kind {
                problems.append("\(path) is declared \(declaredKind) and bound \(kind)")
            }
        }
        for path in declaredByPath.keys.sorted() where !seen.contains(path) {
            problems.append("\(path) is declared and not bound")
        }
        return problems
    }

    /// The request path of a method, as `:path` names it.
    static func path(_ descriptor: MethodDescriptor) -> String {
        "/" + descriptor.fullyQualifiedMethod
    }
}
