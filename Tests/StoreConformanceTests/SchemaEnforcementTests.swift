import DiscfgConformance
import DiscfgCore
import Foundation
import Testing

@Suite("JSON Schemas on keys and prefixes")
struct SchemaEnforcementTests {
    @Test(arguments: StoreKind.allCases)
    func aKeySchemaRefusesEveryWriteThatBreaksIt(kind: StoreKind) async throws {
        try await kind.conformance.schema.aKeySchemaRefusesEveryWriteThatBreaksIt()
    }

    @Test(arguments: StoreKind.allCases)
    func aKeyWithASchemaHoldsJSONWhateverItsContentType(kind: StoreKind) async throws {
        try await kind.conformance.schema.aKeyWithASchemaHoldsJSONWhateverItsContentType()
    }

    @Test(arguments: StoreKind.allCases)
    func aPrefixSchemaChecksTheDocumentOfItsKeys(kind: StoreKind) async throws {
        try await kind.conformance.schema.aPrefixSchemaChecksTheDocumentOfItsKeys()
    }

    @Test(arguments: StoreKind.allCases)
    func attachingASchemaThatValuesBreakIsRefusedUnlessForced(kind: StoreKind) async throws {
        try await kind.conformance.schema.attachingASchemaThatValuesBreakIsRefusedUnlessForced()
    }

    @Test(arguments: StoreKind.allCases)
    func removingASchemaAllowsTheWrite(kind: StoreKind) async throws {
        try await kind.conformance.schema.removingASchemaAllowsTheWrite()
    }

    @Test(arguments: StoreKind.allCases, SchemaChecks.anInvalidSchemaIsRefusedArguments)
    func anInvalidSchemaIsRefused(kind: StoreKind, schema: String) async throws {
        try await kind.conformance.schema.anInvalidSchemaIsRefused(schema: schema)
    }

    @Test(arguments: StoreKind.allCases)
    func schemasHaveHistoryAndTravelWithAnExport(kind: StoreKind) async throws {
        try await kind.conformance.schema.schemasHaveHistoryAndTravelWithAnExport()
    }

    @Test(arguments: StoreKind.allCases, SchemaChecks.discfgsOwnPrefixHoldsOnlySchemasArguments)
    func discfgsOwnPrefixHoldsOnlySchemas(kind: StoreKind, path: String) async throws {
        try await kind.conformance.schema.discfgsOwnPrefixHoldsOnlySchemas(path: path)
    }

    @Test(arguments: StoreKind.allCases)
    func aSchemaIsRemovedOnlyAsASchema(kind: StoreKind) async throws {
        try await kind.conformance.schema.aSchemaIsRemovedOnlyAsASchema()
    }

    @Test(arguments: StoreKind.allCases)
    func expiryIsNeverRefusedByASchema(kind: StoreKind) async throws {
        try await kind.conformance.schema.expiryIsNeverRefusedByASchema()
    }
}
