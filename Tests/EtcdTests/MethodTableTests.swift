@testable import DiscfgEtcd
import GRPCCore
import Testing

/// The method table and the generated server code it is derived from.
@Suite("etcd API: the method table")
struct MethodTableTests {
    static func method(_ service: String, _ name: String, streaming: Bool = false) -> GRPCMethod {
        let descriptor = MethodDescriptor(fullyQualifiedService: service, method: name)
        return streaming
            ? GRPCMethod(descriptor: descriptor, kind: .bidirectional { _, _, _ in })
            : GRPCMethod(descriptor: descriptor, kind: .unary { request, _ in request })
    }

    @Test("the generated server code declares each served method once, KV, Watch, Lease, Maintenance and Cluster.MemberList")
    func declared() {
        let paths = EtcdMethodTable.declared.map(EtcdMethodTable.path)
        #expect(Set(paths).count == paths.count)
        #expect(paths.contains("/etcdserverpb.KV/Put"))
        #expect(paths.contains("/etcdserverpb.Watch/Watch"))
        #expect(paths.contains("/etcdserverpb.Maintenance/Status"))
        #expect(paths.contains("/etcdserverpb.Maintenance/HashKV"))
        let watch = EtcdMethodTable.declared.first { $0.method == "Watch" }
        #expect(watch?.type == .bidirectionalStreaming)
    }

    @Test("a binding the generated code does not declare, one bound twice or as another kind, and a declared method left unbound are each named")
    func problems() {
        let declared = [
            MethodDescriptor(fullyQualifiedService: "t.S", method: "A", type: .unary),
            MethodDescriptor(fullyQualifiedService: "t.S", method: "B", type: .bidirectionalStreaming),
            MethodDescriptor(fullyQualifiedService: "t.S", method: "C", type: .unary),
        ]
        #expect(EtcdMethodTable.problems([Self.method("t.S", "A"), Self.method("t.S", "B", streaming: true), Self.method("t.S", "C")], declared: declared).isEmpty)
        let problems = EtcdMethodTable.problems(
            [Self.method("t.S", "A"), Self.method("t.S", "A"), Self.method("t.S", "B"), Self.method("t.S", "D")], declared: declared
        )
        #expect(problems == [
            "/t.S/A is bound twice", "/t.S/B is declared bidirectionalStreaming and bound unary", "/t.S/D is not declared", "/t.S/C is declared and not bound",
        ])
    }
}
