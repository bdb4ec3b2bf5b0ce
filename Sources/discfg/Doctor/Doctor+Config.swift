import DiscfgCore
import DiscfgSecrets
#if canImport(Glibc)
import Glibc
#endif
import Foundation

extension Doctor {
    /// The selected config (does it exist, and where was it chosen), then the key files
    /// the store's configs name.
    mutating func examineConfig(_ selection: ConfigSelection?, in store: any ConfigStore) async {
        if let selection {
            let origin = selection.origin
            do {
                let info = try await waiting(for: "config \(selection.name)") { try await store.configInfo(selection.name) }
                add(.ok("config", "\(selection.name) (chosen by \(origin)) exists, at revision \(info.revision.rawValue)"))
            } catch let error as DiscfgError where error.code == .configNotFound {
                add(.fail(
                    "config", "\(selection.name) (chosen by \(origin)) does not exist in this store",
                    fix: "discfg create \(selection.name)\(storeFlag), or choose another: discfg use NAME"
                ))
            } catch let error as DiscfgError where error.code == .permissionDenied {
                add(.fail(
                    "config", "\(selection.name) (chosen by \(origin)): you may not read it: \(error.message)",
                    fix: "ask for read rights on \(selection.name) (a token of role read for it, or the IAM read actions)"
                ))
            } catch let error as DiscfgError {
                add(.fail("config", "\(selection.name) (chosen by \(origin)) cannot be read: \(error.message)", fix: nil))
            } catch {
                add(.fail("config", "\(selection.name) (chosen by \(origin)) cannot be read: \(error)", fix: nil))
            }
        }
        await examineKeys(in: store)
    }

    /// Every `file://` key a config names, opened the way sealing opens it (``FileKey``:
    /// owner, mode 600, format), and the default key file when no config names it.
    private mutating func examineKeys(in store: any ConfigStore) async {
        let configs: [ConfigInfo]
        do {
            configs = try await waiting(for: "the list of configs") { try await store.listConfigs() }
        } catch {
            return
        }
        var users: [String: [ConfigName]] = [:]
        for config in configs {
            guard let key = config.settings.encryption?.key, key.hasPrefix("file://") else { continue }
            users[String(key.dropFirst("file://".count)), default: []].append(config.name)
        }
        let defaultPath = KeyCommand.Init.defaultPath(global.environment)
        guard !users.isEmpty || FileManager.default.fileExists(atPath: defaultPath) else { return }
        // Opening a key holds it in memory, as sealing does.
        CoreDumps.disable()
        for (path, names) in users.sorted(by: { $0.key < $1.key }) {
            let usedBy = "used by " + names.map(\.rawValue).sorted().joined(separator: ", ")
            add(Self.keyFinding(path: path, usedBy: usedBy, unusable: .fail))
        }
        if users[defaultPath] == nil, FileManager.default.fileExists(atPath: defaultPath) {
            add(Self.keyFinding(path: defaultPath, usedBy: "the default key, named by no config here", unusable: .warn))
        }
    }

    private static func keyFinding(path: String, usedBy: String, unusable: DoctorFinding.Status) -> DoctorFinding {
        do {
            _ = try FileKey(path: path)
            var status = stat()
            let mode = stat(path, &status) == 0 ? ", mode \(String(status.st_mode & 0o777, radix: 8))" : ""
            return .ok("key", "\(path) (\(usedBy)) opens\(mode)")
        } catch let error as DiscfgError {
            return DoctorFinding(check: "key", status: unusable, detail: "\(error.message) (\(usedBy))", fix: keyFix(error.message, path: path))
        } catch {
            return DoctorFinding(check: "key", status: unusable, detail: "\(path) (\(usedBy)): \(error)", fix: nil)
        }
    }

    /// The command FileKey's message names (`chmod 600 …`, `chown …`, `discfg key init …`).
    private static func keyFix(_ message: String, path: String) -> String {
        for command in ["chmod 600 ", "chown ", "discfg key init"] {
            if let range = message.range(of: command) {
                let tail = message[range.lowerBound...]
                return String(tail.prefix { $0 != ")" && $0 != ";" })
            }
        }
        return "discfg key init \(path) makes a new key (secrets sealed with the old one need it back)"
    }
}

extension ConfigSelection {
    /// Where the choice was made: `--config`, `DISCFG_CONFIG` or `the file PATH`.
    var origin: String { source.hasPrefix("/") ? "the file \(source)" : source }
}
