import DiscfgCore
import Foundation

/// A counter kept in one key and raised with compare-and-swap: concurrent writers using it
/// show whether a store loses an update or applies one twice.
public enum CompareAndSwapCounter {
    /// Adds one to the counter at `key` `times` times; returns how many attempts lost a race
    /// and were retried. Any failure other than a lost race is thrown.
    public static func increment(_ key: Key, in config: ConfigName, of store: any ConfigStore, times: Int) async throws -> Int {
        var conflicts = 0
        for _ in 0..<times {
            while true {
                let current = try await store.get(key, in: config)
                let next = (current?.text.flatMap { Int($0) } ?? 0) + 1
                // Let the other writers run between the read and the write, so that they race
                // even on a store whose calls never suspend.
                await Task.yield()
                do {
                    _ = try await store.set(key, to: Data(String(next).utf8), in: config, options: SetOptions(conditions: [.version(current?.version ?? 0)]))
                    break
                } catch let error as DiscfgError where error.code == .conditionFailed {
                    conflicts += 1
                    await Task.yield()
                }
            }
        }
        return conflicts
    }
}
