import GRPCCore

/// The etcd API's methods by request path (`/etcdserverpb.KV/Range`): each method the
/// generated server code declares (every service's `Method.descriptors`, made by
/// `scripts/generate-etcd-protos`), bound to its service's handler.
///
/// The generated declarations are the one list of what is served: a binding must name
/// a declared method as the kind it is declared (unary or bidirectional streaming), and
/// every declared method must be bound, or the server does not start
/// (``problems(_:)``). A method added to the protos is then either served or refused
/// out loud, never missing from the table unnoticed. etcd's `Auth` calls discfg does not
/// serve (user and role management) are bound apart, to a refusal naming `discfg token`
/// (``EtcdAuthService/refused``).
enum EtcdMethodTable {
    /// Every method the generated server code declares.
    static var declared: [MethodDescriptor] {
        Etcdserverpb_KV.Method.descriptors + Etcdserverpb_Watch.Method.descriptors + Etcdserverpb_Lease.Method.descriptors
            + Etcdserverpb_Maintenance.Method.descriptors + Etcdserverpb_Cluster.Method.descriptors + Etcdserverpb_Auth.Method.descriptors
    }

    /// The table of the services' methods.
    static func methods(
        kv: EtcdKVService, lease: EtcdLeaseService, watch: EtcdWatchService,
        maintenance: EtcdMaintenanceService, cluster: EtcdClusterService, auth: EtcdAuthService
    ) -> [String: GRPCMethod] {
        let bound: [GRPCMethod] = [
            .unary(Etcdserverpb_KV.Method.Range.descriptor) { try await kv.range(request: $0, context: $1) },
            .unary(Etcdserverpb_KV.Method.Put.descriptor) { try await kv.put(request: $0, context: $1) },
            .unary(Etcdserverpb_KV.Method.DeleteRange.descriptor) { try await kv.deleteRange(request: $0, context: $1) },
            .unary(Etcdserverpb_KV.Method.Txn.descriptor, check: EtcdTxnShape.check) { try await kv.txn(request: $0, context: $1) },
            .unary(Etcdserverpb_KV.Method.Compact.descriptor) { try await kv.compact(request: $0, context: $1) },
            .bidirectional(Etcdserverpb_Watch.Method.Watch.descriptor) { try await watch.watch(request: $0, response: $1, context: $2) },
            .unary(Etcdserverpb_Lease.Method.LeaseGrant.descriptor) { try await lease.leaseGrant(request: $0, context: $1) },
            .unary(Etcdserverpb_Lease.Method.LeaseRevoke.descriptor) { try await lease.leaseRevoke(request: $0, context: $1) },
            .bidirectional(Etcdserverpb_Lease.Method.LeaseKeepAlive.descriptor) { try await lease.leaseKeepAlive(request: $0, response: $1, context: $2) },
            .unary(Etcdserverpb_Lease.Method.LeaseTimeToLive.descriptor) { try await lease.leaseTimeToLive(request: $0, context: $1) },
            .unary(Etcdserverpb_Lease.Method.LeaseLeases.descriptor) { try await lease.leaseLeases(request: $0, context: $1) },
            .unary(Etcdserverpb_Maintenance.Method.Status.descriptor) { try await maintenance.status(request: $0, context: $1) },
            .unary(Etcdserverpb_Cluster.Method.MemberList.descriptor) { try await cluster.memberList(request: $0, context: $1) },
            .unary(Etcdserverpb_Auth.Method.Authenticate.descriptor) { try await auth.authenticate(request: $0, context: $1) },
        ]
        let problems = problems(bound)
        precondition(problems.isEmpty, "the etcd API's method table differs from the generated server code: \(problems.joined(separator: "; "))")
        return Dictionary(uniqueKeysWithValues: (bound + EtcdAuthService.refused).map { (path($0.descriptor), $0) })
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
