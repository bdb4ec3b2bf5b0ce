import DiscfgCore
import DiscfgSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Doctor {
    /// The file, its folder and its header; the store itself only when all is well
    /// (opening a file of an older schema would upgrade it, and a missing one create it).
    mutating func examineSQLite(path: String) -> (any ConfigStore)? {
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        var file = stat()
        guard stat(path, &file) == 0 else {
            let reason = String(cString: strerror(errno))
            var folder = stat()
            let folderNote = stat(directory, &folder) == 0 ? "" : "; its folder \(directory) does not exist either"
            add(.fail(
                "file", "\(path) does not exist (\(reason))\(folderNote); nothing was created",
                fix: "discfg init\(storeFlag) creates it, or point --store/DISCFG_STORE at the store you meant"
            ))
            return nil
        }
        examineFolder(directory)
        guard file.st_mode & S_IFMT == S_IFREG else {
            add(.fail("file", "\(path) is not a regular file", fix: "point --store/DISCFG_STORE at the store file"))
            return nil
        }
        let mode = String(file.st_mode & 0o777, radix: 8)
        let owner = file.st_uid == geteuid() ? "yours" : "owned by \(Self.userName(file.st_uid))"
        let readable = access(path, R_OK) == 0
        let writable = access(path, W_OK) == 0
        if !readable || !writable {
            add(.fail(
                "file", "\(path) is not \(readable ? "writable" : "readable") by you (mode \(mode), \(owner))",
                fix: file.st_uid == geteuid() ? "chmod 600 \(path)" : "run as its owner, or: sudo chown \(geteuid()) \(path)"
            ))
            return nil
        }
        if file.st_mode & 0o077 != 0 {
            add(.warn(
                "file", "\(path) is open to other users (mode \(mode), \(owner)); it holds every config and the tokens",
                fix: "chmod 600 \(path)"
            ))
        } else {
            add(.ok("file", "\(path) exists, readable and writable (mode \(mode), \(owner))"))
        }
        return examineHeader(path)
    }

    /// The folder must let discfg make the write-ahead log beside the file.
    private mutating func examineFolder(_ directory: String) {
        var folder = stat()
        guard stat(directory, &folder) == 0 else { return }
        let mode = String(folder.st_mode & 0o777, radix: 8)
        if access(directory, W_OK | X_OK) != 0 {
            add(.fail(
                "directory", "\(directory) is not writable by you (mode \(mode)); SQLite keeps its write-ahead log beside the store",
                fix: folder.st_uid == geteuid() ? "chmod 700 \(directory)" : "move the store to a folder of yours"
            ))
        } else if folder.st_mode & 0o002 != 0 && folder.st_mode & S_ISVTX == 0 {
            add(.warn("directory", "\(directory) is writable by every user (mode \(mode)): anyone may replace the store", fix: "chmod 700 \(directory)"))
        } else {
            add(.ok("directory", "\(directory) is writable (mode \(mode))"))
        }
    }

    /// The header: SQLite, the journal mode, the schema; then the store, opened.
    private mutating func examineHeader(_ path: String) -> (any ConfigStore)? {
        let header: SQLiteStoreFile
        do {
            header = try SQLiteStoreFile(path: path)
        } catch {
            add(.fail("schema", "\(path) cannot be read: \(error.localizedDescription)", fix: nil))
            return nil
        }
        let supported = SQLiteStoreFile.supportedSchemaVersion
        if header.isEmpty {
            add(.warn("schema", "\(path) is empty: a store not set up yet", fix: "discfg init\(storeFlag)"))
            return nil
        }
        guard header.isSQLite else {
            add(.fail("schema", "\(path) is not a SQLite database", fix: "point --store/DISCFG_STORE at the store file"))
            return nil
        }
        let journal = header.journalMode == "wal" ? "journal mode WAL" : "journal mode \(header.journalMode) (discfg switches it to WAL on opening)"
        switch header.schemaVersion {
        case supported:
            add(.ok("schema", "schema version \(supported), \(journal)"))
        case 0:
            add(.warn("schema", "\(path) is SQLite but not a discfg store yet (schema version 0, \(journal))", fix: "discfg init\(storeFlag) sets it up; or point --store at the store file"))
            return nil
        case ..<supported:
            add(.warn("schema", "schema version \(header.schemaVersion), \(journal); the next command upgrades it to \(supported), once", fix: "discfg init\(storeFlag) upgrades it now"))
            return nil
        default:
            add(.fail("schema", "\(path) has schema version \(header.schemaVersion); this discfg reads up to \(supported)", fix: "upgrade discfg"))
            return nil
        }
        do {
            return try SQLiteStore(path: path)
        } catch let error as DiscfgError {
            add(.fail("open", error.message, fix: nil))
        } catch {
            add(.fail("open", "\(path): \(error)", fix: nil))
        }
        return nil
    }

    static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "\(String(cString: name)) (uid \(uid))"
    }
}
