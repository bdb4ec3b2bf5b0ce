/// A compiled pattern: instructions for a backtracking machine whose backtrack stack lives on
/// the heap, so long inputs cannot overflow the call stack.
struct RegexProgram: Sendable {
    enum Instruction: Sendable {
        case scalar(UInt32)
        case anyButNewline
        case set(Int)
        case split(prefer: Int, other: Int)
        case jump(Int)
        case save(slot: Int)
        case lineStart
        case lineEnd
        case wordBoundary(negated: Bool)
        case backreference(group: Int)
        /// Runs `start..<end` as a sub-match at the current position; continues at `end`.
        case look(start: Int, end: Int, behind: Bool, negated: Bool)
        /// Records the position in `slot` so a loop can tell whether an iteration consumed input.
        case mark(slot: Int)
        /// Fails if the position equals `slot` (an empty iteration of a loop).
        case requireProgress(slot: Int)
        case match
    }

    /// Largest compiled program; counted quantifiers repeat their body, so this bounds `{n}`.
    static let maxInstructions = 100_000

    private(set) var instructions: [Instruction] = []
    private(set) var sets: [RegexCharacterSet] = []
    private(set) var slotCount: Int
    private let anchoredAtStart: Bool
    private let namedReferenceGroups: [Int]
    private let pattern: String

    init(node: RegexNode, groupCount: Int, namedReferenceGroups: [Int], pattern: String) throws(RegexSyntaxError) {
        slotCount = (groupCount + 1) * 2
        self.namedReferenceGroups = namedReferenceGroups
        self.pattern = pattern
        if case .sequence(let nodes) = node, case .lineStart = nodes.first {
            anchoredAtStart = true
        } else if case .lineStart = node {
            anchoredAtStart = true
        } else {
            anchoredAtStart = false
        }
        instructions.append(.save(slot: 0))
        try emit(node)
        instructions.append(.save(slot: 1))
        instructions.append(.match)
    }

    private mutating func append(_ instruction: Instruction) throws(RegexSyntaxError) {
        guard instructions.count < Self.maxInstructions else {
            throw RegexSyntaxError(pattern: pattern, position: 0, message: "pattern too large: it compiles to more than \(Self.maxInstructions) instructions")
        }
        instructions.append(instruction)
    }

    private mutating func emit(_ node: RegexNode) throws(RegexSyntaxError) {
        switch node {
        case .empty: break
        case .scalar(let c): try append(.scalar(c))
        case .anyButNewline: try append(.anyButNewline)
        case .set(let set):
            sets.append(set)
            try append(.set(sets.count - 1))
        case .sequence(let nodes):
            for n in nodes { try emit(n) }
        case .alternation(let nodes):
            var jumps: [Int] = []
            for (i, n) in nodes.enumerated() {
                if i < nodes.count - 1 {
                    let split = instructions.count
                    try append(.split(prefer: split + 1, other: 0))
                    try emit(n)
                    jumps.append(instructions.count)
                    try append(.jump(0))
                    instructions[split] = .split(prefer: split + 1, other: instructions.count)
                } else {
                    try emit(n)
                }
            }
            for j in jumps { instructions[j] = .jump(instructions.count) }
        case .group(let body, let capture):
            if let capture { try append(.save(slot: capture * 2)) }
            try emit(body)
            if let capture { try append(.save(slot: capture * 2 + 1)) }
        case .quantified(let body, let min, let max, let greedy):
            try emitQuantified(body, min: min, max: max, greedy: greedy)
        case .lineStart: try append(.lineStart)
        case .lineEnd: try append(.lineEnd)
        case .wordBoundary(let negated): try append(.wordBoundary(negated: negated))
        case .backreference(let n):
            try append(.backreference(group: n >= 0 ? n : namedReferenceGroups[-2 - n]))
        case .look(let body, let behind, let negated):
            let at = instructions.count
            try append(.look(start: 0, end: 0, behind: behind, negated: negated))
            try emit(body)
            try append(.match)
            instructions[at] = .look(start: at + 1, end: instructions.count, behind: behind, negated: negated)
        }
    }

    private mutating func emitQuantified(_ body: RegexNode, min: Int, max: Int?, greedy: Bool) throws(RegexSyntaxError) {
        for _ in 0..<min { try emit(body) }
        if let max {
            // Each optional copy: split(copy, end); all ends are patched to the end of the chain.
            var splits: [Int] = []
            for _ in min..<max {
                splits.append(instructions.count)
                try append(.split(prefer: 0, other: 0))
                try emit(body)
            }
            let end = instructions.count
            for s in splits {
                instructions[s] = greedy ? .split(prefer: s + 1, other: end) : .split(prefer: end, other: s + 1)
            }
            return
        }
        let checked = body.canMatchEmpty
        let slot = slotCount
        if checked { slotCount += 1 }
        let loop = instructions.count
        try append(.split(prefer: 0, other: 0))
        if checked { try append(.mark(slot: slot)) }
        try emit(body)
        if checked { try append(.requireProgress(slot: slot)) }
        try append(.jump(loop))
        let end = instructions.count
        instructions[loop] = greedy ? .split(prefer: loop + 1, other: end) : .split(prefer: end, other: loop + 1)
    }

    private enum Frame {
        case branch(pc: Int, position: Int)
        case restore(slot: Int, value: Int)
    }

    /// Tries each start position in turn, as an unanchored search does.
    func search(_ input: [UInt32], budget: inout RegexBudget, pattern: String) throws(RegexBudgetExceeded) -> Bool {
        var slots = [Int](repeating: -1, count: slotCount)
        let lastStart = anchoredAtStart ? 0 : input.count
        var start = 0
        while start <= lastStart {
            if case .scalar(let first) = instructions[1] {
                // Skip ahead to the next place the first character occurs.
                while start < input.count, input[start] != first { start += 1 }
                if start == input.count { return false }
            }
            for i in slots.indices { slots[i] = -1 }
            if try run(from: 0, at: start, input: input, slots: &slots, requiredEnd: nil, budget: &budget) { return true }
            start += 1
        }
        return false
    }

    /// Runs from `pc` until a `.match` (true) or until every alternative failed (false).
    private func run(from pc: Int, at position: Int, input: [UInt32], slots: inout [Int], requiredEnd: Int?, budget: inout RegexBudget) throws(RegexBudgetExceeded) -> Bool {
        var stack: [Frame] = []
        var pc = pc
        var position = position
        while true {
            budget.remaining -= 1
            if budget.remaining < 0 { throw RegexBudgetExceeded(pattern: pattern) }
            var ok = true
            switch instructions[pc] {
            case .scalar(let c):
                if position < input.count, input[position] == c {
                    position += 1
                    pc += 1
                } else { ok = false }
            case .anyButNewline:
                if position < input.count, !RegexCharacterSet.isLineTerminator(input[position]) {
                    position += 1
                    pc += 1
                } else { ok = false }
            case .set(let index):
                if position < input.count, sets[index].contains(input[position]) {
                    position += 1
                    pc += 1
                } else { ok = false }
            case .split(let prefer, let other):
                stack.append(.branch(pc: other, position: position))
                pc = prefer
            case .jump(let target):
                pc = target
            case .save(let slot), .mark(let slot):
                stack.append(.restore(slot: slot, value: slots[slot]))
                slots[slot] = position
                pc += 1
            case .requireProgress(let slot):
                if slots[slot] == position { ok = false } else { pc += 1 }
            case .lineStart:
                if position == 0 { pc += 1 } else { ok = false }
            case .lineEnd:
                if position == input.count { pc += 1 } else { ok = false }
            case .wordBoundary(let negated):
                let before = position > 0 && RegexCharacterSet.isWord(input[position - 1])
                let after = position < input.count && RegexCharacterSet.isWord(input[position])
                if (before != after) != negated { pc += 1 } else { ok = false }
            case .backreference(let group):
                let start = slots[group * 2]
                let end = slots[group * 2 + 1]
                if start < 0 || end < 0 {
                    pc += 1
                } else {
                    let length = end - start
                    if position + length <= input.count, input[start..<end].elementsEqual(input[position..<(position + length)]) {
                        position += length
                        pc += 1
                    } else { ok = false }
                }
            case .look(let start, let end, let behind, let negated):
                var inner = slots
                var matched = false
                if behind {
                    var from = position
                    while from >= 0, !matched {
                        matched = try run(from: start, at: from, input: input, slots: &inner, requiredEnd: position, budget: &budget)
                        from -= 1
                    }
                } else {
                    matched = try run(from: start, at: position, input: input, slots: &inner, requiredEnd: nil, budget: &budget)
                }
                if matched != negated {
                    if matched {
                        for i in slots.indices where slots[i] != inner[i] {
                            stack.append(.restore(slot: i, value: slots[i]))
                            slots[i] = inner[i]
                        }
                    }
                    pc = end
                } else { ok = false }
            case .match:
                if let requiredEnd, position != requiredEnd { ok = false } else { return true }
            }
            if ok { continue }
            var resumed = false
            while let frame = stack.popLast() {
                switch frame {
                case .restore(let slot, let value):
                    slots[slot] = value
                case .branch(let target, let at):
                    pc = target
                    position = at
                    resumed = true
                }
                if resumed { break }
            }
            if !resumed { return false }
        }
    }
}
