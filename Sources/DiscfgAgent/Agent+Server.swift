import DiscfgAPI
import DiscfgCore
import Foundation
import HTTPTypes

extension Agent {
    /// `Discfg-Staleness`: on every answer, the seconds (three decimals) since the source
    /// last answered for the stalest config held, or `unknown` before one ever did.
    public static let stalenessHeader = HTTPField.Name("Discfg-Staleness")!

    /// The headers every answer carries: ``stalenessHeader``.
    public func answerHeaders() -> HTTPFields {
        var fields = HTTPFields()
        fields[Self.stalenessHeader] = staleness.map { String(format: "%.3f", $0) } ?? "unknown"
        return fields
    }

    /// How both `discfg agent` and its Lambda extension serve the copies: on loopback
    /// `port`, every read through the router (the followers change the replica behind
    /// the API's back, and each answer carries ``answerHeaders()``), with the agent's
    /// `/healthz` and series on `/metrics`.
    public func serverConfiguration(port: Int) -> DiscfgServer.Configuration {
        var configuration = DiscfgServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.readViews = false
        configuration.health = { self.health() }
        configuration.metricsAppendix = { self.metricsText() }
        configuration.answerHeaders = { self.answerHeaders() }
        return configuration
    }
}
