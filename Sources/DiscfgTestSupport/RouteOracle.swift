import DiscfgAPI
import DiscfgCore
import DiscfgService

extension Endpoint {
    /// Whether `caller` may call this route on `config`, by what its action declares (the
    /// role, and where it reaches), for a caller of whole configs: the authorization
    /// matrices' expectation, worked out apart from the gate that answers the requests.
    public func admits(_ caller: Caller, config: ConfigName?) -> Bool {
        guard let role = kind.role else { return true }
        switch kind.reach {
        case .open: return true
        case .server: return caller.role == .admin && caller.scopes == nil
        case .configs, .config, .keys: return caller.allows(role, on: config)
        }
    }
}
