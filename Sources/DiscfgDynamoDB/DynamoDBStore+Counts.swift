import DiscfgAWS
import DiscfgCore
import Foundation

extension DynamoDBStore {
    /// Counts the keys and bytes of a config whose meta item lacks either (one written
    /// before discfg counted them), and writes both into it conditioned on its lock, so a
    /// change committed while the keys were read makes it count again. Every change keeps
    /// the counts from then on. A config whose counts are known is left alone.
    ///
    /// It reads the config's keys once, page by page (one `Query`, strongly consistent),
    /// holding one page at a time; keys past their TTL count until swept, as every change
    /// counts them.
    func countKeysAndBytes(_ name: ConfigName) async throws {
        var attempt = 0
        while true {
            guard let old = try await meta(name, consistent: true) else { throw DiscfgError.configNotFound(name) }
            guard old.info.keyCount == nil || old.info.byteCount == nil else { return }
            let root = KeyPrefix.root.range
            var input = keyRange(name, from: root.lower, to: root.scanUpper, consistent: true)
            var keys = 0
            var bytes = 0
            while true {
                let page = try await connection.queryPage(input)
                for item in (page.Items ?? []).compactMap(ItemCodec.item) where root.contains(item.key) {
                    keys += 1
                    bytes += PageBudget.size(item)
                }
                guard let next = page.LastEvaluatedKey else { break }
                input.ExclusiveStartKey = next
            }
            var counted = old
            counted.info.keyCount = keys
            counted.info.byteCount = bytes
            counted.lock = old.lock + 1
            do {
                try await putMeta(counted, expectedLock: old.lock)
                return
            } catch let error as AWSError where error.code == .conditionalCheckFailed {
                attempt += 1
                try await raceBackoff(attempt, config: name)
            }
        }
    }
}
