import DiscfgAWS
import DiscfgClient
import DiscfgCore
import DiscfgStores
import Foundation

extension Doctor {
    /// The server's health, whether it wants a token and takes ours, and its clock.
    mutating func examineServer(_ url: URL) async -> (any ConfigStore)? {
        let store: RemoteStore
        do {
            var opener = try global.opener()
            opener.requestTimeout = timeout
            store = try opener.openServer(url)
        } catch let error as DiscfgError {
            add(.fail("server", error.message, fix: nil))
            return nil
        } catch {
            add(.fail("server", "\(error)", fix: nil))
            return nil
        }
        let address = store.address
        guard await examineHealth(store, address: address) else { return nil }
        guard await examineAccess(store, address: address) else { return nil }
        return store
    }

    /// `GET /healthz`, which also reads the server's store.
    private mutating func examineHealth(_ store: RemoteStore, address: String) async -> Bool {
        let answer: ServerAnswer
        do {
            answer = try await waiting(for: "\(address)/healthz") { try await store.probe("/healthz", anonymous: true, timeout: timeout) }
        } catch let error as DiscfgError {
            add(.fail(
                "server", "\(address) cannot be reached (tried for up to \(timeout.components.seconds) s): \(error.message)",
                fix: "start the server (discfg serve), or set --store/DISCFG_STORE to its address"
            ))
            return false
        } catch {
            add(.fail("server", "\(address): \(error)", fix: nil))
            return false
        }
        switch answer.status {
        case 200:
            add(.ok("server", "\(address)/healthz answers ok (the server reads its store)"))
        case 404, 403:
            // API Gateway or a Lambda function URL has no /healthz; the API answers below.
            add(.ok("server", "\(address) answers (no /healthz there: HTTP \(answer.status))"))
        default:
            add(.fail(
                "server", "\(address)/healthz answers HTTP \(answer.status)" + (answer.error.map { ": \($0.message)" } ?? ""),
                fix: "run discfg doctor on the server's machine, against its store"
            ))
            return false
        }
        if let clock = answer.clock {
            add(Self.clockFinding(skew: clock.skew, against: "the server's", signed: store.signsRequests))
        }
        return true
    }

    /// Whether the server wants a token, and whether it takes the one we send.
    private mutating func examineAccess(_ store: RemoteStore, address: String) async -> Bool {
        let tokenSource = global.token != nil ? "--token" : "DISCFG_TOKEN"
        let makeOne = "make one with 'discfg token create --role read' against the server's store, then export DISCFG_TOKEN=…"
        do {
            let anonymous = try await waiting(for: "\(address)/v1/configs") { try await store.probe("/v1/configs", anonymous: true, timeout: timeout) }
            let wantsToken = anonymous.status == 401
            guard store.sendsToken || store.signsRequests else {
                if wantsToken {
                    add(.fail("token", "\(address) requires a bearer token and none was given", fix: makeOne))
                    return false
                }
                return accessFinding(anonymous, address: address, how: "without a token")
            }
            let answer = try await store.probe("/v1/configs", timeout: timeout)
            let how = store.signsRequests ? "with an AWS SigV4 signature" : "with the token from \(tokenSource)"
            if answer.status == 401 {
                add(.fail("token", "\(address) refuses the token from \(tokenSource): \(answer.error?.message ?? "HTTP 401")", fix: "check the token for typos, or \(makeOne)"))
                return false
            }
            if !wantsToken, store.sendsToken, answer.status == 200 {
                add(.ok("token", "\(address) takes requests without a token; the one from \(tokenSource) is accepted too"))
                return true
            }
            return accessFinding(answer, address: address, how: how)
        } catch let error as DiscfgError {
            add(.fail("token", "\(address): \(error.message)", fix: nil))
            return false
        } catch {
            add(.fail("token", "\(address): \(error)", fix: nil))
            return false
        }
    }

    private mutating func accessFinding(_ answer: ServerAnswer, address: String, how: String) -> Bool {
        switch answer.status {
        case 200:
            add(.ok("token", "\(address) answers \(how)"))
            return true
        case 403:
            add(.fail("token", "\(address) refuses \(how): \(answer.error?.message ?? "HTTP 403")", fix: "use a token whose role and configs cover what you read"))
        default:
            add(.fail("token", "\(address) answers HTTP \(answer.status) \(how)" + (answer.error.map { ": \($0.message)" } ?? ""), fix: nil))
        }
        return false
    }
}
