import Foundation

extension CLIRunner {
    /// Starts `discfg serve` on a free loopback port with this runner's store, and waits
    /// until it says where it listens.
    /// - Parameter arguments: more flags for `serve`.
    /// - Returns: the running server and its HTTP port.
    /// - Throws: when it cannot be started or names no port within a minute; it is killed then.
    public func serve(_ arguments: [String] = []) async throws -> (server: ChildProcess, port: Int) {
        let server = try launch(["serve", "--port", "0", "--log-level", "error"] + arguments, stdout: .discard)
        do {
            return (server, try await server.announcedPort())
        } catch {
            await server.kill()
            throw error
        }
    }

    /// Starts `discfg serve --etcd 127.0.0.1:0` with this runner's store, and waits until
    /// the etcd API says where it listens.
    /// - Returns: the running server and its etcd port.
    /// - Throws: as ``serve(_:)`` does.
    public func serveEtcd(_ arguments: [String] = []) async throws -> (server: ChildProcess, port: Int) {
        let server = try launch(["serve", "--port", "0", "--log-level", "error", "--etcd", "127.0.0.1:0"] + arguments, stdout: .discard)
        do {
            return (server, try await server.announcedEtcdPort())
        } catch {
            await server.kill()
            throw error
        }
    }

    /// Starts `discfg agent --config demo` on a free loopback port, checking every second,
    /// and waits until it says where it listens.
    /// - Returns: the running agent and its port.
    /// - Throws: as ``serve(_:)`` does.
    public func agent(_ arguments: [String] = []) async throws -> (agent: ChildProcess, port: Int) {
        let agent = try launch(["agent", "--config", "demo", "--port", "0", "--interval", "1s", "--log-level", "error"] + arguments, stdout: .discard)
        do {
            return (agent, try await agent.announcedPort())
        } catch {
            await agent.kill()
            throw error
        }
    }

    /// A runner whose store is a fresh table on the test process's shared moto server,
    /// with moto's credentials and no AWS profile. The table is not created: run
    /// `init --store` with the returned URL.
    /// - Returns: the runner and the table's store URL.
    public static func onDynamoDB() async throws -> (CLIRunner, String) {
        let moto = try await SharedMotoServer.shared.server()
        var cli = try CLIRunner()
        let table = "cli-\(UUID().uuidString.prefix(12))"
        cli.environment["DISCFG_STORE"] = nil
        cli.environment["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE"
        cli.environment["AWS_SECRET_ACCESS_KEY"] = "discfg-test"
        cli.environment["AWS_EC2_METADATA_DISABLED"] = "true"
        cli.environment.removeValue(forKey: "AWS_PROFILE")
        return (cli, "dynamodb://us-east-1/\(table)?endpoint=\(moto.endpoint.absoluteString)")
    }
}
