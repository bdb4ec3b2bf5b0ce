import DiscfgFlags

/// Which version an entity sees: computed, not pushed, so every evaluator agrees offline
/// and an entity keeps the candidate as the share grows (sticky by construction, across
/// hosts and restarts, with no table of who has what).
///
/// The rule, exactly, for other languages to reproduce:
/// 1. bytes = UTF-8 of the deployment id, one 0x00 byte, UTF-8 of the entity as given (no
///    normalization);
/// 2. hash = MurmurHash3 x86_32 of bytes with seed 0 (an unsigned 32-bit number);
/// 3. bucket = (hash · 10,000) >> 32, computed in 64 bits: 0…9,999;
/// 4. the entity sees the candidate iff bucket < the share in basis points at that instant
///    (``Deployment/status(at:)``).
///
/// A growing share adds buckets and removes none, so nobody goes back; a rollback lowers
/// it, so the highest buckets — the last exposed — lose the candidate first, and nobody
/// who never had it gets it. The id in the hash makes each deployment pick its own set.
extension Deployment {
    /// The entity's bucket, 0…9,999, for the deployment `deploymentID`.
    public static func bucket(deploymentID: String, entity: String) -> Int {
        var bytes = Array(deploymentID.utf8)
        bytes.append(0)
        bytes.append(contentsOf: entity.utf8)
        let hash = MurmurHash3.x86_32(bytes, seed: 0)
        return Int((UInt64(hash) * 10_000) >> 32)
    }

    /// The entity's bucket in this deployment.
    public func bucket(of entity: String) -> Int { Self.bucket(deploymentID: id, entity: entity) }

    /// Whether `entity` sees the candidate at `now` (unix milliseconds).
    public func seesCandidate(entity: String, at now: Int64) -> Bool {
        status(at: now).exposes(bucket: bucket(of: entity))
    }

    /// The revision `entity` reads at `now`: the candidate's or the stable one.
    public func version(for entity: String, at now: Int64) -> Revision {
        seesCandidate(entity: entity, at: now) ? candidateRevision : stableRevision
    }
}

/// The entity a reader names, checked: the one rule every face applies to what it is given.
public enum DeploymentEntity {
    /// The most bytes of UTF-8 an entity may hold.
    public static let maxBytes = 1024

    /// `entity` when a reader may name it.
    /// - Throws: `invalidArgument` naming `field` for an empty entity, one over
    ///   ``maxBytes`` or one with control characters.
    public static func checked(_ entity: String, field: String) throws -> String {
        guard !entity.isEmpty, entity.utf8.count <= maxBytes, !entity.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw DiscfgError.invalid(field, "\(field) names an entity in 1 to \(maxBytes) bytes without control characters")
        }
        return entity
    }
}
