import DiscfgAWS
import DiscfgCore
@testable import DiscfgDynamoDB
import Foundation
import Synchronization
import Testing

@Suite("DynamoDB table management")
struct TableManagementTests {
    @Test func ensureCreatesAnOnDemandTableWithStreamTTLAndIndexes() async throws {
        let store = try await makeStore(create: false)
        #expect(try await store.table.describe() == nil)
        let messages = Mutex<[String]>([])
        let created = try await store.table.ensure { message in messages.withLock { $0.append(message) } }
        #expect(created)
        let status = try #require(try await store.table.describe())
        #expect(status.status == "ACTIVE")
        #expect(status.capacity == .onDemand)
        #expect(status.streamViewType == "NEW_IMAGE")
        #expect(status.timeToLive == "ENABLED")
        #expect(Set(status.indexes) == ["byExpiry"])
        #expect(messages.withLock { $0 }.contains { $0.contains("creating DynamoDB table") })
        #expect(messages.withLock { $0 }.contains { $0.contains("is ACTIVE") })
        #expect(try await store.table.ensure() == false, "a second ensure finds the table")
    }

    @Test func provisionedTableAndUpdateCapacity() async throws {
        let store = try await makeStore(create: false)
        try await store.table.ensure(capacity: .provisioned(read: 5, write: 3))
        #expect(try await store.table.describe()?.capacity == .provisioned(read: 5, write: 3))
        try await store.table.updateCapacity(.provisioned(read: 10, write: 7))
        #expect(try await store.table.describe()?.capacity == .provisioned(read: 10, write: 7))
    }

    @Test func creatingTheFirstConfigCreatesTheTable() async throws {
        let messages = Mutex<[String]>([])
        let store = try await makeStore(create: false) { configuration in
            configuration.tableCapacity = .provisioned(read: 2, write: 2)
            configuration.progress = { message in messages.withLock { $0.append(message) } }
        }
        _ = try await store.createConfig(ConfigName("first"), settings: ConfigSettings())
        let status = try #require(try await store.table.describe())
        #expect(status.status == "ACTIVE")
        #expect(status.capacity == .provisioned(read: 2, write: 2))
        #expect(status.timeToLive == "ENABLED")
        #expect(!messages.withLock { $0 }.isEmpty)
        #expect(try await store.listConfigs().map(\.name.rawValue) == ["first"])
    }

    @Test func anOperationOnAMissingTableSaysHowToCreateIt() async throws {
        let store = try await makeStore(create: false)
        do {
            _ = try await store.get(Key("/k"), in: ConfigName("app"))
            Issue.record("a get on a missing table succeeded")
        } catch let error as DiscfgError {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("does not exist"))
            #expect(error.message.contains("ResourceNotFoundException"))
            #expect(error.message.contains("discfg init"))
            #expect(error.message.contains(store.table.name))
            #expect(!error.message.contains("\n"), "one line")
        }
    }

    @Test func aForeignTableIsRefused() async throws {
        let store = try await makeStore(create: false)
        _ = try await store.client.send(operation: "CreateTable", body: Data("""
            {"TableName": "\(store.table.name)", "BillingMode": "PAY_PER_REQUEST",
             "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
             "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}
            """.utf8))
        do {
            try await store.table.ensure()
            Issue.record("a table without discfg's indexes was accepted")
        } catch let error as DiscfgError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("not created by discfg"))
        }
    }
}
