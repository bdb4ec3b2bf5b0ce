import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The Prometheus client libraries' standard `process_*` series, read from `/proc` at
/// each scrape (Linux; elsewhere none): what tools that read a server's `/metrics` expect
/// of any process, such as `etcdctl check datascale`, which reads
/// `process_resident_memory_bytes`.
///
/// ```swift
/// ProcessMetrics.text()  // "# HELP process_cpu_seconds_total …\nprocess_cpu_seconds_total 1.52\n…"
/// ```
public enum ProcessMetrics {
    /// The series in Prometheus' text format, each with its `HELP` and `TYPE` lines; the
    /// empty string where `/proc` cannot be read.
    public static func text() -> String {
        #if os(Linux)
        guard let sample = ProcFS.sample() else { return "" }
        var text = ""
        func series(_ name: String, _ type: String, _ help: String, _ value: Double) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(format(value))\n"
        }
        series("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", sample.cpuSeconds)
        series("process_max_fds", "gauge", "Maximum number of open file descriptors.", sample.maxFDs)
        series("process_open_fds", "gauge", "Number of open file descriptors.", sample.openFDs)
        series("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", sample.residentBytes)
        series("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", sample.startTime)
        series("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", sample.virtualBytes)
        return text
        #else
        return ""
        #endif
    }

    /// A whole number without a fraction, else the shortest decimal that reads back exact.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

#if os(Linux)
/// One reading of this process from `/proc`.
struct ProcFS {
    var cpuSeconds: Double
    var maxFDs: Double
    var openFDs: Double
    var residentBytes: Double
    var startTime: Double
    var virtualBytes: Double

    /// This process now; nil when `/proc` is not there or reads otherwise than expected.
    static func sample() -> ProcFS? {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        guard ticks > 0, pageSize > 0,
              let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let bootTime = bootTime(),
              let fields = statFields(stat), fields.count > 21,
              let user = Double(fields[11]), let system = Double(fields[12]), let started = Double(fields[19]),
              let virtual = Double(fields[20]), let resident = Double(fields[21])
        else { return nil }
        var limit = rlimit()
        let maxFDs = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Double(limit.rlim_cur) : 0
        let openFDs = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return ProcFS(
            cpuSeconds: (user + system) / ticks, maxFDs: maxFDs, openFDs: Double(openFDs), residentBytes: resident * pageSize,
            startTime: bootTime + started / ticks, virtualBytes: virtual
        )
    }

    /// The fields of `/proc/self/stat` after the command's name (which may hold spaces
    /// and parentheses, so it is cut at the last `)`): field 3, the state, first.
    static func statFields(_ stat: String) -> [Substring]? {
        guard let end = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ", omittingEmptySubsequences: true)
    }

    /// When the machine booted, in seconds since the epoch (`btime` of `/proc/stat`).
    static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
#endif
