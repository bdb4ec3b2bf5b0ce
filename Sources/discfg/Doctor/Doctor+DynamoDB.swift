import DiscfgAWS
import DiscfgCore
import DiscfgDynamoDB
import DiscfgStores
import Foundation

extension Doctor {
    /// The endpoint, the credentials, the table (status, indexes, TTL, stream), a read
    /// with the caller's rights, and the clock against the endpoint's.
    mutating func examineDynamoDB(_ location: DynamoDBLocation) async -> (any ConfigStore)? {
        let store: DynamoDBStore
        do {
            var opener = try global.opener()
            opener.createTable = false
            opener.requestTimeout = timeout
            opener.retryPolicy = RetryPolicy.none
            store = try opener.openDynamoDB(location)
        } catch let error as DiscfgError {
            let fix = error.field == "region" ? "pass --region us-east-1, set AWS_REGION, or name it in the URL: dynamodb://REGION/\(location.table)" : nil
            add(.fail(error.field == "keyId" ? "credentials" : "endpoint", error.message, fix: fix))
            return nil
        } catch {
            add(.fail("endpoint", "\(error)", fix: nil))
            return nil
        }
        let configuration = store.client.configuration
        let endpoint = configuration.resolvedEndpoint.absoluteString
        add(.ok("endpoint", "\(endpoint) (region \(configuration.region), table \(location.table))"))
        guard await examineCredentials(store.client, location: location) else { return nil }
        guard let status = await examineTable(store, endpoint: endpoint) else {
            examineClock(store.client)
            return nil
        }
        examineClock(store.client)
        examineTableSettings(status, store: store)
        guard await examineReads(store) else { return nil }
        return store
    }

    /// Where the credentials came from, with the key id masked; false when there are none.
    private mutating func examineCredentials(_ client: AWSJSONClient, location: DynamoDBLocation) async -> Bool {
        let credentials: AWSCredentials
        do {
            credentials = try await waiting(for: "AWS credentials") { try await client.credentialProvider.credentials() }
        } catch let error as CredentialChainError {
            let tried = error.attempts.map { "\($0.source): \($0.reason)" }.joined(separator: "; ")
            add(.fail(
                "credentials", "no AWS credentials found; tried \(tried)",
                fix: "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, pass --cred-profile P, or add a profile to ~/.aws/credentials"
            ))
            return false
        } catch {
            add(.fail("credentials", "AWS credentials could not be read: \(error)", fix: nil))
            return false
        }
        let source = await (client.credentialProvider as? CredentialChain)?.currentSource ?? client.credentialProvider.name
        var detail = "access key \(Self.masked(credentials.accessKeyID)) from \(Self.describe(source: source))"
        if credentials.sessionToken != nil { detail += ", with a session token" }
        if let expiration = credentials.expiration {
            detail += ", expiring \(Show.relative(expiration))"
        }
        add(.ok("credentials", detail))
        return true
    }

    /// The table's status; nil when it cannot be used (missing, unreachable, refused).
    private mutating func examineTable(_ store: DynamoDBStore, endpoint: String) async -> TableStatus? {
        let name = store.table.name
        let described: TableStatus?
        do {
            described = try await waiting(for: "DescribeTable at \(endpoint)") { try await store.table.describe() }
        } catch let error as DiscfgError {
            add(Self.failure("table", error, action: "dynamodb:DescribeTable", table: name, endpoint: endpoint))
            return nil
        } catch {
            add(.fail("table", "DescribeTable at \(endpoint) failed: \(error)", fix: nil))
            return nil
        }
        guard let status = described else {
            add(.fail("table", "table \(name) does not exist at \(endpoint)", fix: "discfg init\(storeFlag)"))
            return nil
        }
        switch status.status {
        case "ACTIVE":
            add(.ok("table", "table \(name) is ACTIVE (\(status.capacity), about \(status.itemCount) items)"))
        case "CREATING", "UPDATING":
            add(.warn("table", "table \(name) is \(status.status); commands wait until it is ACTIVE", fix: "wait a minute and run discfg doctor again"))
        default:
            add(.fail("table", "table \(name) is \(status.status)", fix: "discfg init\(storeFlag) once it is gone, or choose another table"))
            return nil
        }
        return status
    }

    /// Indexes, TTL and stream as discfg makes them (docs/dynamodb-layout.md).
    private mutating func examineTableSettings(_ status: TableStatus, store: DynamoDBStore) {
        let name = status.name
        let missing = DynamoDBTable.expectedIndexes.filter { !status.indexes.contains($0) }
        if missing.isEmpty {
            add(.ok("indexes", "local secondary indexes \(DynamoDBTable.expectedIndexes.joined(separator: ", "))"))
        } else {
            add(.fail(
                "indexes", "table \(name) lacks the index \(missing.joined(separator: ", ")): it was not made by discfg",
                fix: "use another table: --store dynamodb://REGION/NEW-TABLE, then discfg init"
            ))
        }
        let attribute = DynamoDBTable.expectedTimeToLiveAttribute
        let ttlFix = "discfg init\(storeFlag) turns it on"
        switch (status.timeToLive, status.timeToLiveAttribute) {
        case ("ENABLED", attribute?), ("ENABLING", attribute?):
            add(.ok("ttl", "TTL \(status.timeToLive) on attribute \(attribute)"))
        case ("ENABLED", let other?), ("ENABLING", let other?):
            add(.warn(
                "ttl", "TTL is on attribute \(other), not \(attribute): expired keys and old history stay in the table",
                fix: "aws dynamodb update-time-to-live --table-name \(name) --time-to-live-specification Enabled=false,AttributeName=\(other); then \(ttlFix)"
            ))
        default:
            add(.warn(
                "ttl", "TTL is \(status.timeToLive): expired keys and old history stay in the table (discfg still hides them)",
                fix: ttlFix
            ))
        }
        let view = DynamoDBTable.expectedStreamViewType
        let streamFix = "aws dynamodb update-table --table-name \(name) --stream-specification StreamEnabled=true,StreamViewType=\(view)"
        switch status.streamViewType {
        case view?, "NEW_AND_OLD_IMAGES"?:
            add(.ok("stream", "stream on (\(status.streamViewType ?? view)); notifications (--notify) can be sent"))
        case let other?:
            add(.warn("stream", "stream view \(other): the notification function needs \(view)", fix: streamFix))
        case nil:
            add(.warn("stream", "stream off: changes are not announced to --notify targets (watch does not need it)", fix: streamFix))
        }
    }

    /// Reads as the store makes them: the config registry (`Query`) and a config's meta
    /// item (`GetItem`, of a name no config has); AccessDenied names the action.
    private mutating func examineReads(_ store: DynamoDBStore) async -> Bool {
        let endpoint = store.client.configuration.resolvedEndpoint.absoluteString
        var action = "dynamodb:Query"
        do {
            let configs = try await waiting(for: "a Query of table \(store.table.name)") { try await store.listConfigs() }
            action = "dynamodb:GetItem"
            do {
                _ = try await store.configInfo(ConfigName("doctor-reads-this"))
            } catch let error as DiscfgError where error.code == .configNotFound {
                // The read was allowed; there is no such config.
            }
            add(.ok("permissions", "reads the table with your rights (dynamodb:Query, dynamodb:GetItem; \(configs.count) config\(configs.count == 1 ? "" : "s"))"))
            return true
        } catch let error as DiscfgError {
            add(Self.failure("permissions", error, action: action, table: store.table.name, endpoint: endpoint))
            return false
        } catch {
            add(.fail("permissions", "\(action) on table \(store.table.name) failed: \(error)", fix: nil))
            return false
        }
    }

    /// The clock against the `Date` of the endpoint's last answer, if one came.
    private mutating func examineClock(_ client: AWSJSONClient) {
        guard let reading = client.serverClock.reading else { return }
        add(Self.clockFinding(skew: reading.skew, against: "the endpoint's (\(client.configuration.resolvedEndpoint.host ?? "AWS"))", signed: true))
    }

    /// A failed AWS call as a finding: refused rights name the action, an unreachable
    /// endpoint names the URL.
    static func failure(_ check: String, _ error: DiscfgError, action: String, table: String, endpoint: String) -> DoctorFinding {
        switch error.code {
        case .permissionDenied:
            return .fail(check, "AccessDenied: you may not \(action) on table \(table): \(error.message)",
                         fix: "grant \(action) (and the rest of discfg's DynamoDB actions) on table \(table) and its indexes")
        case .unauthenticated:
            return .fail(check, "AWS refused the credentials: \(error.message)",
                         fix: "check the access key and secret, renew a session token, and the clock")
        default:
            return .fail(check, error.message.contains(endpoint) ? error.message : "\(endpoint): \(error.message)",
                         fix: "check the endpoint URL, region and network (is the endpoint up?)")
        }
    }

    /// `AKIA…WXYZ`: enough to tell keys apart, too little to use.
    static func masked(_ keyID: String) -> String {
        keyID.count >= 12 ? "\(keyID.prefix(4))…\(keyID.suffix(4))" : "…"
    }

    /// A credential source as a person would look for it.
    static func describe(source: String) -> String {
        switch source {
        case "explicit credentials": return "--key-id/--secret-key"
        case _ where source.hasPrefix("shared config files"):
            let files = SharedConfigFiles(environment: ProcessInfo.processInfo.environment)
            let profile = source.split(separator: "profile ").last.map { String($0.dropLast()) } ?? "default"
            let file = files.credentialsProfiles[profile] != nil ? files.credentialsPath : files.configPath
            return "profile \(profile) in \(file)"
        default: return source
        }
    }
}
