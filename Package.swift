// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// The targets' own code: a nonisolated async function runs where its caller runs
/// (SE-0461), so a request's chain of calls stays on its event loop without a hop to
/// the generic executor at each call and return.
let sources: [SwiftSetting] = strict + [
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "discfg",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "discfg", targets: ["discfg"]),
        .library(name: "DiscfgCore", targets: ["DiscfgCore"]),
        .library(name: "DiscfgWire", targets: ["DiscfgWire"]),
        .library(name: "DiscfgSQLite", targets: ["DiscfgSQLite"]),
        .library(name: "DiscfgAWS", targets: ["DiscfgAWS"]),
        .library(name: "DiscfgService", targets: ["DiscfgService"]),
        .library(name: "DiscfgAPI", targets: ["DiscfgAPI"]),
        .library(name: "DiscfgClient", targets: ["DiscfgClient"]),
        .library(name: "DiscfgSecrets", targets: ["DiscfgSecrets"]),
        .library(name: "DiscfgDynamoDB", targets: ["DiscfgDynamoDB"]),
        .library(name: "DiscfgLambda", targets: ["DiscfgLambda"]),
        .library(name: "DiscfgConformance", targets: ["DiscfgConformance"]),
        .library(name: "DiscfgConfiguration", targets: ["DiscfgConfiguration"]),
        .library(name: "DiscfgJSON", targets: ["DiscfgJSON"]),
        .library(name: "JSONSchema", targets: ["JSONSchema"]),
        .library(name: "DiscfgFlags", targets: ["DiscfgFlags"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // OTLP/HTTP export only: the default traits would bring gRPC's transport too.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .target(
            name: "DiscfgJSON",
            swiftSettings: sources
        ),
        .target(
            name: "JSONSchema",
            dependencies: ["DiscfgJSON"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgFlags",
            dependencies: ["DiscfgJSON"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgCore",
            dependencies: ["DiscfgJSON", "JSONSchema", "DiscfgFlags", .product(name: "Yams", package: "Yams"), .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: sources
        ),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "CSQLiteLog", dependencies: ["CSQLite"]),
        .target(name: "CTaskMemory"),
        .target(
            name: "DiscfgSQLite",
            dependencies: ["DiscfgCore", "DiscfgJSON", "CSQLite", "CSQLiteLog"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgAWS",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgSignals",
            dependencies: [
                "DiscfgCore",
                "DiscfgAWS",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgDynamoDB",
            dependencies: ["DiscfgCore", "DiscfgJSON", "DiscfgAWS"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgSecrets",
            dependencies: ["DiscfgCore", "DiscfgAWS", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgWire",
            dependencies: ["DiscfgCore", "DiscfgJSON"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgService",
            dependencies: ["DiscfgCore", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgConformance",
            dependencies: ["DiscfgCore", "DiscfgJSON"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgTestSupport",
            dependencies: [
                "DiscfgCore",
                "DiscfgWire",
                "DiscfgJSON",
                "DiscfgService",
                "DiscfgNetwork",
                "DiscfgAWS",
                "DiscfgAPI",
                "DiscfgSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "DiscfgAgent",
            dependencies: [
                "DiscfgCore",
                "DiscfgAPI",
                "DiscfgAWS",
                "DiscfgJSON",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgStores",
            dependencies: ["DiscfgCore", "DiscfgAWS", "DiscfgClient", "DiscfgDynamoDB", "DiscfgSQLite"],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "discfg-bench",
            dependencies: ["DiscfgCore", "DiscfgAWS", "DiscfgDynamoDB", "DiscfgStores", "DiscfgTestSupport"],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "discfg-agent-sim",
            dependencies: ["DiscfgAgent", "DiscfgCore", "DiscfgAWS", "DiscfgDynamoDB", "DiscfgSignals", "DiscfgStores", "DiscfgTestSupport"],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "discfg-secrets-bench",
            dependencies: ["DiscfgCore", "DiscfgSecrets", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "discfg-lambda-bench",
            dependencies: ["DiscfgTestSupport"],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "json-schema-bench",
            dependencies: ["DiscfgJSON", "JSONSchema"],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "flag-eval-bench",
            dependencies: ["DiscfgFlags", "DiscfgJSON"],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "discfg-write-bench",
            dependencies: ["DiscfgCore", "DiscfgJSON", "DiscfgSQLite"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgClient",
            dependencies: [
                "DiscfgCore",
                "DiscfgWire",
                "DiscfgJSON",
                "DiscfgAWS",
                "DiscfgSecrets",
                "DiscfgNetwork",
                "DiscfgFlags",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgConfiguration",
            dependencies: [
                "DiscfgCore",
                "DiscfgJSON",
                "DiscfgAWS",
                "DiscfgSecrets",
                "DiscfgClient",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgNetwork",
            dependencies: [
                "DiscfgCore",
                "DiscfgService",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgAPIAssets",
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgAPI",
            dependencies: [
                "DiscfgCore",
                "DiscfgWire",
                "DiscfgJSON",
                "DiscfgService",
                "DiscfgNetwork",
                "DiscfgAPIAssets",
                "DiscfgFlags",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgEtcd",
            dependencies: [
                "CTaskMemory",
                "DiscfgCore",
                "DiscfgService",
                "DiscfgNetwork",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Generated/README.md"],
            swiftSettings: sources
        ),
        .target(
            name: "DiscfgLambda",
            dependencies: [
                "DiscfgCore",
                "DiscfgWire",
                "DiscfgService",
                "DiscfgStores",
                "DiscfgAPI",
                "DiscfgNetwork",
                "DiscfgAWS",
                "DiscfgDynamoDB",
                "DiscfgSecrets",
                "DiscfgSignals",
                "DiscfgJSON",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: sources
        ),
        .executableTarget(
            name: "discfg",
            dependencies: [
                "DiscfgAgent",
                "DiscfgFlags",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                "DiscfgStores",
                "DiscfgLambda",
                "DiscfgCore",
                "DiscfgWire",
                "DiscfgJSON",
                "JSONSchema",
                "DiscfgSQLite",
                "DiscfgAPI",
                "DiscfgAWS",
                "DiscfgDynamoDB",
                "DiscfgClient",
                "DiscfgSecrets",
                "DiscfgSignals",
                "DiscfgEtcd",
                "DiscfgNetwork",
                "DiscfgService",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: sources
        ),
        .testTarget(
            name: "DiscfgAWSTests",
            dependencies: [
                "DiscfgAWS",
                "DiscfgTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [
                .copy("Resources/aws-sig-v4-test-suite"),
                .copy("Resources/botocore_sign.py"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SignalsTests",
            dependencies: [
                "DiscfgCore",
                "DiscfgAWS",
                "DiscfgSignals",
                "DiscfgTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DiscfgJSONTests",
            dependencies: ["DiscfgJSON"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "JSONSchemaTests",
            dependencies: ["DiscfgJSON", "JSONSchema"],
            resources: [
                .copy("Resources/json-schema-test-suite"),
                .copy("Resources/known-failures.json"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FlagsTests",
            dependencies: ["DiscfgFlags", "DiscfgJSON", "DiscfgTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DiscfgCoreTests",
            dependencies: ["DiscfgCore", "DiscfgJSON", "DiscfgConformance", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EtcdTests",
            dependencies: [
                "DiscfgCore", "DiscfgService", "DiscfgEtcd", "DiscfgSQLite", "DiscfgNetwork", "DiscfgTestSupport", .product(name: "GRPCCore", package: "grpc-swift-2"), .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"), .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: [
                "DiscfgCore", "DiscfgJSON", "DiscfgConformance", "DiscfgSQLite", "DiscfgAWS", "DiscfgDynamoDB", "DiscfgTestSupport", "DiscfgClient", "DiscfgStores", "CSQLite", "CSQLiteLog",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "APITests",
            dependencies: [
                "DiscfgCore", "DiscfgWire", "DiscfgJSON", "DiscfgService", "DiscfgSQLite", "DiscfgAPI", "DiscfgClient", "DiscfgAWS", "DiscfgTestSupport", "DiscfgSecrets", "DiscfgNetwork", "DiscfgFlags",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DynamoDBTests",
            dependencies: ["DiscfgCore", "DiscfgConformance", "DiscfgAWS", "DiscfgDynamoDB", "DiscfgTestSupport", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LambdaTests",
            dependencies: [
                "DiscfgCore", "DiscfgWire", "DiscfgService", "DiscfgAWS", "DiscfgDynamoDB", "DiscfgSQLite", "DiscfgTestSupport", "DiscfgLambda", "DiscfgAPI", "DiscfgEtcd", "discfg",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SecretsTests",
            dependencies: [
                "DiscfgCore", "DiscfgAWS", "DiscfgSecrets", "DiscfgTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ConfigurationProviderTests",
            dependencies: [
                "DiscfgCore", "DiscfgConfiguration", "DiscfgClient", "DiscfgSecrets", "DiscfgSQLite", "DiscfgTestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AgentTests",
            dependencies: ["DiscfgAgent", "DiscfgAPI", "DiscfgCore", "DiscfgAWS", "DiscfgSQLite", "DiscfgStores", "DiscfgTestSupport", "DiscfgConformance"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "DiscfgCore", "DiscfgWire", "DiscfgJSON", "DiscfgAWS", "DiscfgClient", "discfg", "DiscfgTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
