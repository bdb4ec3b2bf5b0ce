import DiscfgCore
import DiscfgWire
import Foundation

extension ChildProcess {
    /// The built `discfg`: next to the test bundle in the build products directory, or
    /// in `.build/debug` of this checkout.
    public static let discfg: URL = {
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var url = start
            for _ in 0..<4 {
                candidates.append(url.appendingPathComponent("discfg"))
                url = url.deletingLastPathComponent()
            }
        }
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug/discfg").standardized)
        // A file, not a folder: a checkout cloned into a folder named discfg must not be taken for the binary.
        func isProgram(_ url: URL) -> Bool {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && FileManager.default.isExecutableFile(atPath: url.path)
        }
        guard let found = candidates.first(where: isProgram) else {
            fatalError("the discfg binary was not built; looked in \(candidates.map(\.path))")
        }
        return found
    }()
}

extension ChildProcess.Output {
    /// The JSON envelope `discfg` printed with `-f json`.
    public func envelope() throws -> Envelope {
        try JSONDecoder.discfg().decode(Envelope.self, from: stdoutData)
    }
}
