/// What one reporter — an agent, a `serve` process — has seen of a running deployment
/// since it began: per version, the requests applications served with it, the errors they
/// reported against it, and the distinct readers (entities) that read it.
///
/// Reports are cumulative and replace the reporter's last one, so a report lost or sent
/// twice costs nothing: the next carries the whole count. A store keeps them apart from the
/// config's keys and history (they are telemetry, not configuration: they make no revision
/// and no event), one per reporter per deployment, and ``DeploymentHealth`` sums them for
/// the monitor's ``HealthTest`` and for `deploy status`.
///
/// ```swift
/// let report = try HealthReport(reporter: "web-7f3a#9c1d", stable: .init(requests: 900, errors: 2, readers: 40),
///                               candidate: .init(requests: 100, errors: 9, readers: 5), at: now)
/// ```
public struct HealthReport: Hashable, Sendable, Codable {
    /// One version's counts.
    public struct Counts: Hashable, Sendable, Codable {
        /// Requests applications served with the version.
        public var requests: UInt64
        /// Errors applications reported against it (at most ``requests``).
        public var errors: UInt64
        /// Distinct entities that read it.
        public var readers: UInt64

        /// Counts of one version.
        public init(requests: UInt64 = 0, errors: UInt64 = 0, readers: UInt64 = 0) {
            self.requests = requests
            self.errors = errors
            self.readers = readers
        }

        private enum CodingKeys: String, CodingKey, CaseIterable { case requests, errors, readers }

        /// Reads counts strictly: all three, whole numbers, no other field.
        public init(from decoder: any Decoder) throws {
            let fields = try decoder.strictFields(CodingKeys.self, of: "a version's counts", at: "counts")
            try self.init(
                requests: fields.required(UInt64.self, .requests, at: "counts"), errors: fields.required(UInt64.self, .errors, at: "counts"),
                readers: fields.required(UInt64.self, .readers, at: "counts")
            )
        }

        /// The sum of two reporters' counts, saturating rather than overflowing.
        public static func + (lhs: Counts, rhs: Counts) -> Counts {
            Counts(
                requests: lhs.requests.addingSaturated(rhs.requests), errors: lhs.errors.addingSaturated(rhs.errors),
                readers: lhs.readers.addingSaturated(rhs.readers)
            )
        }

        /// The counts as ``HealthTest`` weighs them.
        public var cohort: HealthTest.Cohort { HealthTest.Cohort(reads: requests, errors: errors) }
    }

    /// The most bytes of UTF-8 a reporter's name holds.
    public static let maxReporterBytes = 128
    /// The most reporters a store keeps for one deployment; a new reporter past it is refused.
    public static let maxReporters = 10_000

    /// Who reports: an agent's instance id and its process, unique per process so a
    /// restarted reporter starts a new count instead of lowering its old one.
    public let reporter: String
    /// Counts on the stable version.
    public let stable: Counts
    /// Counts on the candidate.
    public let candidate: Counts
    /// When the counts were taken, in unix milliseconds.
    public let at: Int64

    /// A report.
    /// - Throws: `invalidArgument` naming the field at fault: a reporter that is empty, over
    ///   ``maxReporterBytes`` or holds a control character or `/`; more errors than requests;
    ///   a time out of range.
    public init(reporter: String, stable: Counts, candidate: Counts, at: Int64) throws {
        guard (1...Self.maxReporterBytes).contains(reporter.utf8.count),
              !reporter.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "/" })
        else {
            throw DiscfgError.invalid("reporter", "a health reporter is 1 to \(Self.maxReporterBytes) bytes with no control character and no /, got \"\(String(reporter.prefix(40)).debugEscaped)\"")
        }
        for (name, counts) in [("stable", stable), ("candidate", candidate)] where counts.errors > counts.requests {
            throw DiscfgError.invalid(name, "a health report's \(name) errors (\(counts.errors)) exceed its requests (\(counts.requests)); count every request, failed or not")
        }
        guard (0...Deployment.maxMilliseconds).contains(at) else {
            throw DiscfgError.invalid("at", "a health report's time is unix milliseconds from 0 to \(Deployment.maxMilliseconds), got \(at)")
        }
        self.reporter = reporter
        self.stable = stable
        self.candidate = candidate
        self.at = at
    }

    private enum CodingKeys: String, CodingKey, CaseIterable { case reporter, stable, candidate, at }

    /// Reads a report as strictly as a stored record: every field there, none unknown.
    public init(from decoder: any Decoder) throws {
        let fields = try decoder.strictFields(CodingKeys.self, of: "a health report", at: "report")
        try self.init(
            reporter: fields.required(String.self, .reporter, at: "report"), stable: fields.required(Counts.self, .stable, at: "report"),
            candidate: fields.required(Counts.self, .candidate, at: "report"), at: fields.required(Int64.self, .at, at: "report")
        )
    }

    /// Whether a store keeps this report, given its reporter's stored one and how many
    /// reporters the deployment has: a report never goes back in time, so an older one
    /// arriving late leaves the newer in place.
    /// - Throws: `tooLarge` for a new reporter when ``maxReporters`` already report.
    public func replaces(_ stored: HealthReport?, reporters: Int) throws -> Bool {
        guard let stored else {
            guard reporters < Self.maxReporters else {
                throw DiscfgError(.tooLarge, "deployment already has \(Self.maxReporters) health reporters; a new one is refused", field: "reporter")
            }
            return true
        }
        return at >= stored.at
    }

    /// The refusal of a report for a deployment that does not run in `config`.
    public static func notRunning(_ id: String, in config: ConfigName) -> DiscfgError {
        DiscfgError(.keyNotFound, "config \"\(config)\" runs no deployment \(id); health is reported only while one runs", field: "id")
    }
}

/// The reports of one deployment added up: what the monitor tests and `deploy status` shows.
public struct DeploymentHealth: Hashable, Sendable {
    /// How many reporters reported.
    public var reporters: Int
    /// The stable version's counts, summed.
    public var stable: HealthReport.Counts
    /// The candidate's counts, summed.
    public var candidate: HealthReport.Counts
    /// The newest report's time, unix milliseconds; nil with none.
    public var latest: Int64?

    /// The sum of `reports`.
    public init(_ reports: [HealthReport]) {
        reporters = reports.count
        stable = reports.reduce(HealthReport.Counts()) { $0 + $1.stable }
        candidate = reports.reduce(HealthReport.Counts()) { $0 + $1.candidate }
        latest = reports.map(\.at).max()
    }

    /// What `test` says of the counts.
    public func decision(_ test: HealthTest = .standard) -> HealthTest.Decision {
        test.decide(stable: stable.cohort, candidate: candidate.cohort)
    }

    /// The counts in words, as a rollback's reason and `deploy status` give them:
    /// `candidate 9 errors in 100 requests, stable 2 in 900 (4 reporters)`.
    public var summary: String {
        "candidate \(candidate.errors) errors in \(candidate.requests) requests, stable \(stable.errors) in \(stable.requests) (\(reporters) reporter\(reporters == 1 ? "" : "s"))"
    }
}

extension UInt64 {
    fileprivate func addingSaturated(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
