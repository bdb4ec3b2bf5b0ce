@testable import DiscfgEtcd
import Testing

/// ``TaskStack`` only shapes where a task's frames are allocated (what it saves is
/// measured by `benchmarks/etcd.sh`); these check that it is safe wherever it is called.
@Suite("Task memory taken in one piece")
struct TaskStackTests {
    @Test("a task that reserves its slab then runs frames past it, in many tasks at once, ends with every answer right")
    func framesPastTheReservedSlab() async {
        let sums = await withTaskGroup(of: Int.self) { group in
            for task in 0..<64 {
                group.addTask {
                    TaskStack.reserve()
                    return await Self.depth(task % 8 * 40)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sums.sorted() == (0..<64).map { $0 % 8 * 40 * (($0 % 8 * 40) + 1) / 2 }.sorted())
    }

    @Test("reserving outside a task, or twice in one, changes nothing")
    func reserveOutsideATask() async {
        TaskStack.reserve()
        let sum = await Task {
            TaskStack.reserve()
            TaskStack.reserve()
            return await Self.depth(100)
        }.value
        #expect(sum == 5050)
    }

    /// 1 + 2 + … + n, one async frame for each, each frame holding a kilobyte across its await.
    private static func depth(_ n: Int) async -> Int {
        guard n > 0 else { return 0 }
        var block = [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: 1024)
        let below = await depth(n - 1)
        block[0] = 0
        return n + below + Int(block[1]) - Int(UInt8(truncatingIfNeeded: n))
    }
}
