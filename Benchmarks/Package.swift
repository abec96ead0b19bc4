// swift-tools-version: 6.1
import Foundation
import PackageDescription

// The benchmarks are a package of their own so that the library's build and CI never compile
// ordo-one/benchmark. The library is the parent directory; a path dependency's identity is its
// directory name, which depends on where the repository was cloned, so it is read here.
let libraryPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let libraryIdentity = libraryPath.lastPathComponent.lowercased()

/// An ordo-one benchmark suite in `Benchmarks/NAME`.
func benchmarkTarget(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            .product(name: "WebImage", package: libraryIdentity),
            .product(name: "Benchmark", package: "benchmark"),
        ],
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "swift-web-image-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // With the Vapor trait: EmbeddedProxy mounts the proxy in a Vapor application too.
        .package(path: "..", traits: ["Vapor"]),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    ],
    targets: [
        benchmarkTarget("Coding"),
        benchmarkTarget("Caching"),
        benchmarkTarget("Manager"),
        .executableTarget(
            name: "CompareWorkloads",
            dependencies: [
                .product(name: "WebImage", package: libraryIdentity),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Sources/CompareWorkloads"
        ),
        .executableTarget(
            name: "HTTPFloor",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Sources/HTTPFloor"
        ),
        .executableTarget(
            name: "EmbeddedProxy",
            dependencies: [
                .product(name: "WebImageServer", package: libraryIdentity),
                .product(name: "WebImageVapor", package: libraryIdentity),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/EmbeddedProxy"
        ),
        .executableTarget(
            name: "Soak",
            dependencies: [
                .product(name: "WebImage", package: libraryIdentity),
                .product(name: "WebImageTesting", package: libraryIdentity),
            ],
            path: "Sources/Soak"
        ),
    ],
    swiftLanguageModes: [.v6]
)
