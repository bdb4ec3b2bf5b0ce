/// A help page with the command's own options before the global ones.
///
/// argument-parser lists titled option groups (``GlobalOptions/title``) before the
/// untitled OPTIONS section that holds a command's own options; a reader looks for the
/// command's own first, so the OPTIONS section is moved before the global one.
enum HelpSections {
    static let optionsHeader = "OPTIONS:"
    static let globalHeader = GlobalOptions.title.uppercased() + ":"

    /// `help` with its OPTIONS section just before its global options' section.
    static func ownOptionsFirst(_ help: String) -> String {
        var lines = help.components(separatedBy: "\n")
        guard let global = lines.firstIndex(of: globalHeader), let own = lines.firstIndex(of: optionsHeader), global < own else { return help }
        // A section runs from its header to the next line that starts a section.
        let end = lines[(own + 1)...].firstIndex { isHeader($0) } ?? lines.endIndex
        var section = Array(lines[own..<end])
        lines.removeSubrange(own..<end)
        while section.last == "" { section.removeLast() }
        section.append("")
        lines.insert(contentsOf: section, at: global)
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// `OPTIONS:`, `GLOBAL OPTIONS:`, `SUBCOMMANDS:`: unindented capitals and a colon.
    private static func isHeader(_ line: String) -> Bool {
        guard line.hasSuffix(":"), let first = line.first, first.isUppercase else { return false }
        return line == line.uppercased()
    }
}
