// swift-tools-version: 6.1
// A small Hummingbird service configured by discfg: its address and a live greeting from a
// config, a secret opened in the process. It depends on discfg by path, so it builds what
// an application would import: the DiscfgClient, DiscfgConfiguration and DiscfgSecrets
// products. docs/swift.md walks through running it against `discfg serve`.
import PackageDescription

let package = Package(
    name: "hello-service",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "discfg", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // The same traits as discfg's own dependency, so one build of it serves both.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
    ],
    targets: [
        .executableTarget(
            name: "hello-service",
            dependencies: [
                .product(name: "DiscfgClient", package: "discfg"),
                .product(name: "DiscfgConfiguration", package: "discfg"),
                .product(name: "DiscfgSecrets", package: "discfg"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
