// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "discfg",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "discfg", targets: ["discfg"]),
        .library(name: "DiscfgCore", targets: ["DiscfgCore"]),
        .library(name: "DiscfgSQLite", targets: ["DiscfgSQLite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        .target(
            name: "DiscfgCore",
            dependencies: [.product(name: "Yams", package: "Yams")],
            swiftSettings: strict
        ),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "DiscfgSQLite",
            dependencies: ["DiscfgCore", "CSQLite"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "discfg",
            dependencies: [
                "DiscfgCore",
                "DiscfgSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DiscfgCoreTests",
            dependencies: ["DiscfgCore"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: ["DiscfgCore", "DiscfgSQLite"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CLITests",
            dependencies: ["DiscfgCore", "discfg"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
