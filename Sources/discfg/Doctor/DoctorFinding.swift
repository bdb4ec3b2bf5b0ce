import Foundation

/// One thing `discfg doctor` checked: what, how it stands, and how to fix it.
struct DoctorFinding: Encodable, Equatable {
    /// How a check came out. Only `fail` blocks use (exit 1).
    enum Status: String, Encodable {
        case ok, warn, fail
    }

    /// The check's stable name, e.g. `table` or `credentials`.
    var check: String
    var status: Status
    /// What was found, naming the file, endpoint or setting involved.
    var detail: String
    /// A command or setting that fixes it; nil when nothing needs fixing.
    var fix: String?

    static func ok(_ check: String, _ detail: String) -> DoctorFinding {
        DoctorFinding(check: check, status: .ok, detail: detail, fix: nil)
    }

    static func warn(_ check: String, _ detail: String, fix: String?) -> DoctorFinding {
        DoctorFinding(check: check, status: .warn, detail: detail, fix: fix)
    }

    static func fail(_ check: String, _ detail: String, fix: String?) -> DoctorFinding {
        DoctorFinding(check: check, status: .fail, detail: detail, fix: fix)
    }

    // `fix` is written as null when there is none, so every finding has the same fields.
    private enum CodingKeys: String, CodingKey { case check, status, detail, fix }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(check, forKey: .check)
        try container.encode(status, forKey: .status)
        try container.encode(detail, forKey: .detail)
        try container.encode(fix, forKey: .fix)
    }
}

/// Every finding of one run, printed as lines or as one JSON document.
struct DoctorReport: Encodable {
    var action = "doctor"
    var findings: [DoctorFinding]

    /// The worst status: `fail` when anything blocks use.
    var status: DoctorFinding.Status {
        if findings.contains(where: { $0.status == .fail }) { return .fail }
        return findings.contains(where: { $0.status == .warn }) ? .warn : .ok
    }

    private enum CodingKeys: String, CodingKey { case action, findings, status }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(action, forKey: .action)
        try container.encode(findings, forKey: .findings)
        try container.encode(status, forKey: .status)
    }

    /// `{"action": "doctor", "findings": [{check, status, detail, fix}], "status": …}`.
    var json: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// One line a finding, its fix after it, then a summary line.
    var text: String {
        let width = (findings.map(\.check.count).max() ?? 0) + 1
        var lines = findings.map { finding in
            var line = finding.status.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)
                + finding.check.padding(toLength: width, withPad: " ", startingAt: 0) + finding.detail
            if let fix = finding.fix { line += " — fix: " + fix }
            return line
        }
        let failed = findings.filter { $0.status == .fail }.count
        let warned = findings.filter { $0.status == .warn }.count
        switch (failed, warned) {
        case (0, 0): lines.append("all \(findings.count) checks passed")
        case (0, _): lines.append("nothing blocks use; \(warned) warning\(warned == 1 ? "" : "s")")
        default:
            lines.append("\(failed) problem\(failed == 1 ? " blocks" : "s block") use"
                + (warned > 0 ? "; \(warned) warning\(warned == 1 ? "" : "s")" : ""))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
