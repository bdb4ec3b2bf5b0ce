import DiscfgAWS
import DiscfgCore
import DiscfgStores
import Foundation

/// The checks of `discfg doctor`, gathered as findings. Each store kind has its own file
/// (`Doctor+SQLite`, `Doctor+DynamoDB`, `Doctor+Server`); the config and key checks
/// (`Doctor+Config`) run on whichever store answered.
struct Doctor {
    let global: GlobalOptions
    let output: Output
    /// How long each network step may take.
    let timeout: Duration
    private(set) var findings: [DoctorFinding] = []

    init(global: GlobalOptions, output: Output, timeout: Duration) {
        self.global = global
        self.output = output
        self.timeout = timeout
    }

    mutating func add(_ finding: DoctorFinding) {
        findings.append(finding)
    }

    /// Runs every check that applies to the chosen store.
    mutating func examine() async {
        let location: StoreLocation
        do {
            location = try global.storeLocation()
        } catch let error as DiscfgError {
            add(.fail("store", "\(storeSource): \(error.message)", fix: "set --store or DISCFG_STORE to a store URL such as sqlite:///path/discfg.db"))
            return
        } catch {
            add(.fail("store", "\(storeSource): \(error)", fix: nil))
            return
        }
        guard location != .memory else {
            add(.warn("store", "memory: (from \(storeSource)) keeps nothing after each command ends", fix: "choose a lasting store: --store sqlite:///path/discfg.db"))
            return
        }
        add(.ok("store", "\(location) (from \(storeSource))"))
        let (selection, choice) = selectedConfig()
        let store: (any ConfigStore)?
        switch location {
        case .sqlite(let path): store = examineSQLite(path: path)
        case .memory: store = nil
        case .dynamodb(let dynamo): store = await examineDynamoDB(dynamo)
        case .server(let url): store = await examineServer(url)
        }
        if let choice { add(choice) }
        guard let store else {
            if let selection {
                add(.ok("config", "\(selection.name) (chosen by \(selection.origin)); not looked up, as the store is not usable"))
            }
            return
        }
        await examineConfig(selection, in: store)
    }

    /// Where the store URL came from.
    var storeSource: String {
        if global.store != nil { return "--store" }
        if let url = global.environment["DISCFG_STORE"], !url.isEmpty { return "DISCFG_STORE" }
        if let choice = try? global.chosenContext() { return "context \(choice.name) (\(choice.source))" }
        return "the default"
    }

    /// ` --store 'URL'` when the store was named by the flag, for fixes to repeat.
    var storeFlag: String {
        guard let store = global.store else { return "" }
        return " --store '\(store)'"
    }

    /// The selected config, or a finding saying none is or why the choice is unreadable
    /// (added after the store's, where a reader looks for it).
    private func selectedConfig() -> (ConfigSelection?, DoctorFinding?) {
        do {
            guard let selection = try global.selectedConfig() else {
                return (nil, .ok("config", "none selected; commands name their config (discfg use NAME selects one here)"))
            }
            return (selection, nil)
        } catch let error as DiscfgError {
            return (nil, .fail("config", error.message, fix: "discfg use NAME (or remove the .discfg file named)"))
        } catch {
            return (nil, .fail("config", "\(error)", fix: nil))
        }
    }

    /// Runs `body`, telling a human on standard error what is awaited when it takes over a second.
    func waiting<T>(for what: String, _ body: () async throws -> T) async rethrows -> T {
        let human = output.format == .human
        let note = Task {
            try await Task.sleep(for: .seconds(1))
            if human { FileHandle.standardError.write(Data("discfg: doctor: waiting for \(what)…\n".utf8)) }
        }
        defer { note.cancel() }
        return try await body()
    }

    /// A clock finding: ok within 5 s, a warning beyond, failing past SigV4's 5 minutes
    /// when `signed` (AWS refuses such signatures).
    static func clockFinding(skew: TimeInterval, against what: String, signed: Bool) -> DoctorFinding {
        let seconds = Int(skew.rounded())
        let magnitude = abs(seconds)
        let detail = magnitude <= 1
            ? "this machine's clock agrees with \(what)"
            : "this machine's clock is \(magnitude) s \(seconds > 0 ? "ahead of" : "behind") \(what)"
        let fix = "sync the clock: timedatectl set-ntp true (or chronyc makestep)"
        if magnitude <= 5 { return .ok("clock", detail) }
        if signed, Double(magnitude) > ServerClockReading.signatureWindow {
            return .fail("clock", detail + "; AWS refuses signatures more than 5 minutes off", fix: fix)
        }
        return .warn("clock", detail, fix: fix)
    }
}
