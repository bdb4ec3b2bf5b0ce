/// The arithmetic of a key's chain of events, shared by the stores that link each event
/// to the key's previous one and to one further back, by Myers's rule for jump pointers
/// ("An applicative random-access stack", 1983): from the newest event, the oldest one
/// after a given revision is found in O(log n) steps.
///
/// Events are numbered from 1 at the chain's oldest (`seq`). Each jumps back to the event
/// ``jumpSeq(of:)`` names; a new event jumps past its parent's jump when
/// ``jumpsPastParentJump(parentSeq:parentJumpSeq:)``, else to its parent.
public enum KeyChainRule {
    /// The `seq` that the chain's event number `seq` jumps to when every event before it
    /// was linked by this rule: `seq - 1` written greedily as a sum of numbers 2^k − 1
    /// (a skew-binary number), the jump goes back by the smallest of them.
    public static func jumpSeq(of seq: Int64) -> Int64 {
        guard seq > 1 else { return 1 }
        var rest = seq - 1
        var term: Int64 = 1
        while term <= (rest - 1) / 2 { term = 2 * term + 1 }
        var smallest = term
        while rest > 0 {
            while term > rest { term /= 2 }
            rest -= term
            smallest = term
        }
        return seq - smallest
    }

    /// Whether an event after the parent numbered `parentSeq`, whose jump is numbered
    /// `parentJumpSeq`, jumps to where the parent's jump jumps (the two spans behind the
    /// parent are equal) rather than to the parent. Spans then grow as a skew-binary
    /// number's digits do.
    public static func jumpsPastParentJump(parentSeq: Int64, parentJumpSeq: Int64) -> Bool {
        parentSeq > parentJumpSeq && parentSeq - parentJumpSeq == parentJumpSeq - jumpSeq(of: parentJumpSeq)
    }
}
