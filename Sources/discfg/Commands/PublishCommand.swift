import ArgumentParser
import DiscfgAWS
import DiscfgCore
import DiscfgSecrets
import DiscfgStores
import DiscfgWire
import Foundation

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Write a config's current state to S3 as one snapshot document.",
        usage: "discfg publish [<options>] [<config>] --to s3://BUCKET/PREFIX [--watch]",
        discussion: """
        The snapshot is the object PREFIX/CONFIG.json (content type application/json, \
        metadata discfg-revision), the same bytes for the same revision, so its ETag \
        stands for the revision. It is written only when the config's revision moved past \
        the object's, and never over a newer one. With --snapshot-key-file each \
        snapshot is signed (HMAC-SHA256 under a key derived from the file), and an \
        agent given the same file takes no other; without it a snapshot carries only \
        a sha256, which tells damage but not forgery. With --watch it stays and publishes \
        after each change, one line per write, until Ctrl-C. The endpoint is AWS's, or \
        AWS_ENDPOINT_URL_S3 (then AWS_ENDPOINT_URL).

        Examples:
          discfg publish myapp --to s3://acme-config/prod
          discfg publish myapp --to s3://acme-config/prod --watch
          discfg publish myapp --to s3://acme/prod --snapshot-key-file snap.key
          discfg update myapp --publish s3://acme-config/prod  # on AWS
        """
    )

    @OptionGroup(title: GlobalOptions.title) var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Where to publish: s3://BUCKET or s3://BUCKET/PREFIX.", valueName: "s3-url"))
    var to: String

    @Flag(name: .long, help: "Keep running and publish after each change.")
    var watch = false

    @Option(name: .customLong("snapshot-key-file"), help: ArgumentHelp("Sign each snapshot with this key file ('discfg key init' makes one), for agents given the same --snapshot-key-file.", valueName: "file"))
    var snapshotKeyFile: String?

    @Argument(help: PositionalArguments.help("[CONFIG]"), completion: ShellCompletion.configs) var arguments: [String] = []

    func run() async throws {
        try await global.run("publish") { output in
            let destination = try SnapshotDestination(parsing: to, field: "--to")
            let key = try snapshotKeyFile.map { path in
                do { return try FileKey(path: path).snapshotKey } catch let error as DiscfgError {
                    throw usage("--snapshot-key-file: \(error.message)", field: "--snapshot-key-file")
                }
            }
            let name = try PositionalArguments(arguments: arguments, selected: global.selectedConfig()).configOnly()
            let opener = try global.opener()
            let store = try opener.open(global.storeLocation())
            let s3 = try opener.openS3()
            defer { Task { try? await s3.shutdown() } }
            let publisher = SnapshotPublisher(s3: s3, key: key)
            let info = try await store.configInfo(name)
            var snapshot = try await PublishedSnapshot.read(from: store, config: name)
            try await publishReporting(snapshot, createdAt: info.createdAt, publisher, destination, output)
            guard watch else { return }
            output.note("watching config \(name) from revision \(snapshot.revision.next) (Ctrl-C to stop)")
            for try await event in await store.watch(name, scope: .prefix(.root), from: snapshot.revision.next) {
                // The watch says something moved; catching up brings every change up to
                // now at once, so a burst (or a transaction's many events) is one write.
                guard event.revision > snapshot.revision else { continue }
                try await snapshot.catchUp(from: store)
                try await publishReporting(snapshot, createdAt: info.createdAt, publisher, destination, output)
            }
        }
    }

    /// Publishes and prints one line (one JSON envelope) of what happened.
    private func publishReporting(_ snapshot: PublishedSnapshot, createdAt: Date, _ publisher: SnapshotPublisher,
                                  _ destination: SnapshotDestination, _ output: Output) async throws {
        let object = "s3://\(destination.bucket)/\(destination.key(for: snapshot.config))"
        let outcome: SnapshotPublisher.Outcome
        do {
            outcome = try await publisher.publish(snapshot, createdAt: createdAt, to: destination)
        } catch let error as S3Error {
            throw error.discfgError
        }
        var envelope = Envelope(action: "publish")
        envelope.config = snapshot.config.rawValue
        let line: String
        switch outcome {
        case .published(let revision, let etag):
            envelope.revision = revision
            line = "published \(snapshot.config)@\(revision.rawValue) to \(object) (ETag \(etag))"
        case .upToDate(let revision):
            envelope.revision = revision
            line = "\(object) already holds revision \(revision.rawValue); nothing written"
        }
        envelope.message = line
        if watch { output.emitStreaming(envelope) { line } } else { output.emit(envelope) { line } }
    }
}
