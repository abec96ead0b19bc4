// swift-tools-version: 6.1
import Foundation
import PackageDescription

// libFuzzer targets, one per decoder and one for the image proxy's request parsing, in a package of their own so that the library's build and
// CI never link them (they have no `main`; libFuzzer supplies it). Build and run with
// `scripts/fuzz.sh`. The library is the parent directory; its identity is its directory name.
let libraryPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let libraryIdentity = libraryPath.lastPathComponent.lowercased()

func fuzzTarget(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport", .product(name: "WebImageCodecs", package: libraryIdentity)],
        path: "Sources/\(name)"
    )
}

let package = Package(
    name: "swift-web-image-fuzz",
    // The Video trait: FuzzVideo needs the video coder (FFmpeg's libraries, which scripts/install-deps.sh installs).
    dependencies: [.package(path: "..", traits: ["Video"])],
    targets: ["FuzzJPEG", "FuzzPNG", "FuzzGIF", "FuzzWebP", "FuzzAVIF", "FuzzBMP", "FuzzTIFF", "FuzzHEIF", "FuzzJXL", "FuzzSVG"].map(fuzzTarget) + [
        .executableTarget(
            name: "FuzzProxyPath", dependencies: [.product(name: "WebImageServer", package: libraryIdentity)], path: "Sources/FuzzProxyPath"),
        .executableTarget(
            name: "FuzzProxyOptions",
            dependencies: [.product(name: "WebImageServer", package: libraryIdentity), .product(name: "WebImage", package: libraryIdentity)],
            path: "Sources/FuzzProxyOptions"),
        .executableTarget(
            name: "FuzzJPEGPlanes", dependencies: [.product(name: "WebImageCodecs", package: libraryIdentity)],
            path: "Sources/FuzzJPEGPlanes"),
        .executableTarget(
            name: "FuzzLists", dependencies: [.product(name: "WebImageDataset", package: libraryIdentity)], path: "Sources/FuzzLists"),
        .executableTarget(
            name: "FuzzRobots", dependencies: [.product(name: "WebImageDataset", package: libraryIdentity)], path: "Sources/FuzzRobots"),
        .executableTarget(
            name: "FuzzVideo", dependencies: [.product(name: "WebImageCodecs", package: libraryIdentity)], path: "Sources/FuzzVideo"),
        .executableTarget(
            name: "FuzzS3XML", dependencies: [.product(name: "WebImageS3", package: libraryIdentity)], path: "Sources/FuzzS3XML"),
        .target(name: "FuzzSupport", dependencies: [.product(name: "WebImageCodecs", package: libraryIdentity)], path: "Sources/FuzzSupport"),
    ],
    swiftLanguageModes: [.v6]
)
