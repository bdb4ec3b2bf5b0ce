import DiscfgCore
import DiscfgService
import DiscfgNetwork
import Foundation
import GRPCCore

/// The etcd API's audit lines: one per call, as it ends — its RPC, who made it, the key
/// range it names, the action the pipeline ran it as, its gRPC status and the revision
/// of its change — and one per call refused before it ran. Each is made by the call's
/// ``DiscfgService/AuditNote``, as every face's are, and noted in an ``AuditTrail``,
/// which writes them in batches off the call's path; nothing at all without one.
struct EtcdAudit: Sendable {
    /// Where the lines go; nil for none.
    let trail: AuditTrail?
    /// The config the etcd API serves.
    let config: String

    /// Runs a call of `descriptor` and notes its line: `key` and `rangeEnd` as the
    /// request names them, the revision `revision` reads from a response that changed
    /// something.
    @inline(__always)
    func call<Response>(
        _ descriptor: MethodDescriptor, key: Data = Data(), rangeEnd: Data = Data(),
        revision: (Response) -> Int64? = { _ in nil }, _ body: () async throws -> Response
    ) async throws -> Response {
        guard let trail else { return try await body() }
        let note = AuditNote(AuditNote.Fields(
            route: EtcdMethodTable.path(descriptor), config: config,
            key: key.isEmpty ? nil : Self.printable(key), rangeEnd: rangeEnd.isEmpty ? nil : Self.printable(rangeEnd)
        ))
        do {
            let response = try await note.noting(body)
            note.update { $0.principal = Self.principal; $0.revision = revision(response).map { Revision(UInt64(clamping: $0)) } }
            trail.note(note.record(api: "etcd", route: "unmatched", AuditNote.Answer(grpcStatus: "OK")))
            return response
        } catch {
            note.update { $0.principal = Self.principal }
            trail.note(note.record(api: "etcd", route: "unmatched", AuditNote.Answer(grpcStatus: Self.statusName(error))))
            throw error
        }
    }

    /// Who the current call ran as: its token, or the anonymous caller of a server
    /// without tokens.
    private static var principal: Principal {
        EtcdCaller.current?.principal ?? EtcdBackend.unauthenticated.principal
    }

    /// Runs `Auth.Authenticate` for the user name `user` and notes its line: as the
    /// token it authenticated when it succeeds (the user name is that token's id); when
    /// it fails, with no principal and the user name tried (``AuditRecord/user``), so a
    /// run of guesses shows whom they were aimed at. Never the password.
    func authenticate<Response>(user: String, _ body: () async throws -> Response) async throws -> Response {
        guard let trail else { return try await body() }
        let note = AuditNote(AuditNote.Fields(route: EtcdMethodTable.path(Etcdserverpb_Auth.Method.Authenticate.descriptor), config: config))
        do {
            let response = try await body()
            note.update { $0.principal = Principal(kind: .token, id: user) }
            trail.note(note.record(api: "etcd", route: "unmatched", AuditNote.Answer(grpcStatus: "OK")))
            return response
        } catch {
            note.update { $0.user = Self.userName(user) }
            trail.note(note.record(api: "etcd", route: "unmatched", AuditNote.Answer(grpcStatus: Self.statusName(error))))
            throw error
        }
    }

    /// A user name as an audit line shows it: escaped printable (``printable(_:)``), its
    /// first 64 bytes and `…` past them; and not at all when it holds a discfg token's
    /// text, which a client may give as user name by mistake.
    static func userName(_ name: String) -> String {
        guard !name.contains("dcfg_") else { return "(a discfg token's text; not shown)" }
        let bytes = Data(name.utf8)
        return printable(bytes.prefix(64)) + (bytes.count > 64 ? "…" : "")
    }

    /// Notes a call of `descriptor` refused before it ran (no credentials, a token not
    /// valid): no principal, for none was authenticated.
    func refused(_ descriptor: MethodDescriptor, _ error: RPCError) {
        guard let trail else { return }
        let note = AuditNote(AuditNote.Fields(route: EtcdMethodTable.path(descriptor), config: config))
        trail.note(note.record(api: "etcd", route: "unmatched", AuditNote.Answer(grpcStatus: Self.statusName(error))))
    }

    /// An etcd key as a person reads it: printable ASCII as it is, a backslash and every
    /// other byte as `\xHH`.
    static func printable(_ bytes: Data) -> String {
        var text = ""
        text.reserveCapacity(bytes.count)
        for byte in bytes {
            if byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count < 2 ? "0" : "") + hex
            }
        }
        return text
    }

    /// The name of the gRPC status a call ending with `error` is answered with.
    static func statusName(_ error: any Error) -> String {
        let code = GRPCStatus.fields(error).first.flatMap { Int($0.value) } ?? RPCError.Code.internalError.rawValue
        return code < names.count ? names[code] : String(code)
    }

    private static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
        "UNAUTHENTICATED",
    ]
}

extension Etcdserverpb_TxnResponse {
    /// The revision of the transaction's change; nil when the branch that ran only read.
    var changeRevision: Int64? {
        changes ? header.revision : nil
    }

    /// Whether it holds a put's or a delete's response, a nested transaction's too.
    private var changes: Bool {
        responses.contains { operation in
            switch operation.response {
            case .responsePut?, .responseDeleteRange?: true
            case .responseTxn(let nested)?: nested.changes
            default: false
            }
        }
    }
}
