import DiscfgJSON

extension ChangeTransaction {
    /// Checks the flag sets a change writes under ``ConfigFlags/prefix``: each must be a flag
    /// set flagd's schema v0 accepts (``ConfigFlags/writableFlagSet(_:)``), and no flag key
    /// may be defined by two live sets once the change is made, counting the change's other
    /// writes. Deleting a set is always allowed, and a change that writes no flag set reads
    /// nothing under the prefix.
    ///
    /// - Throws: ``DiscfgError`` (`invalidArgument`) naming the set's key and the JSON Pointer
    ///   of the member refused, or both sets that define one flag key.
    func enforceFlagSets(_ events: [Event]) throws {
        let puts = events.indices.filter { events[$0].kind == .put && ConfigFlags.holdsFlagSet(events[$0].key) }
        guard !puts.isEmpty else { return }
        let written = Set(puts.map { events[$0].key })
        var owners: [String: Key] = [:]
        // Sets the change writes are checked in full; the others only claim their keys, so a
        // set stored before these rules does not block a change to another set.
        let live = try storedItems(under: ConfigFlags.prefix).filter { !$0.isExpired(at: now) }
        let ordered = live.filter { !written.contains($0.key) } + live.filter { written.contains($0.key) }
        for item in ordered {
            let keys = written.contains(item.key) ? try ConfigFlags.writableFlagSet(item).keys : ConfigFlags.definedKeys(item)
            for flag in keys {
                if let other = owners[flag], other != item.key, written.contains(item.key) {
                    let pointer = JSONPointer(tokens: ["flags", flag]).description
                    throw DiscfgError.invalid(
                        "value",
                        "\(item.key.path) defines flag \"\(flag)\" (at \(pointer)), which \(other.path) defines already; a flag key may live in one flag set of a config only"
                    )
                }
                owners[flag] = owners[flag] ?? item.key
            }
        }
    }
}
