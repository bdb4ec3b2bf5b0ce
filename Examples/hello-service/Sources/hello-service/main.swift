// The Swift example of docs/swift.md, as it is written there: a Hummingbird service that
// takes its address and a live setting from the discfg config "shop" (keys under /api),
// and opens a secret in the process. The environment comes first: HTTP_PORT=9000 wins.
import Configuration
import DiscfgClient
import DiscfgConfiguration
import DiscfgSecrets
import Foundation
import Hummingbird

let env = ProcessInfo.processInfo.environment
let client = try ConfigClient(
    url: URL(string: env["DISCFG_URL"] ?? "http://127.0.0.1:8899")!, token: env["DISCFG_TOKEN"],
    keys: StandardKeyResolver(environment: env)
)
let discfg = try await DiscfgProvider(client: client, config: "shop", prefix: "/api")
// The environment first (HTTP_PORT=9000 wins), then discfg.
let config = ConfigReader(providers: [EnvironmentVariablesProvider(), discfg])
let dbPassword = try config.requiredString(forKey: "db.password", isSecret: true)  // /api/db/password

let router = Router()
router.get("/hello") { _, _ in config.string(forKey: "greeting", default: "hello") }  // read live
router.get("/db") { _, _ in "password of \(dbPassword.count) characters" }  // opened, never shown
let app = Application(
    router: router,
    configuration: ApplicationConfiguration(reader: config.scoped(to: "http")),  // /api/http/host, /api/http/port
    services: [discfg]  // follows the config while the application runs
)
try await app.runService()
