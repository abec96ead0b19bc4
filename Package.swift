// swift-tools-version: 6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// Sanitizer builds leave the OTLP exporter out: swift-otel 1.6.0 does not compile with
// -sanitize=thread or address under Swift 6.3.1 (a region-isolation error in its log record
// processor that the plain build does not raise). scripts/sanitize.sh sets this; without the
// exporter, `webimage` refuses OTEL_* tracing at start and the library's spans are unchanged.
let withOTel = Context.environment["WEBIMAGE_WITHOUT_OTEL"] == nil

let package = Package(
    name: "swift-web-image",
    products: [
        // Pick the part you need; each module brings only the dependencies of its own layer.
        .library(name: "WebImage", targets: ["WebImage"]),
        .library(name: "WebImageCore", targets: ["WebImageCore"]),
        .library(name: "WebImageCodecs", targets: ["WebImageCodecs"]),
        .library(name: "WebImageCaching", targets: ["WebImageCaching"]),
        .library(name: "WebImageDownloader", targets: ["WebImageDownloader"]),
        // S3 and the S3-compatible stores: SigV4, the object operations, the AWS credential chain.
        .library(name: "WebImageS3", targets: ["WebImageS3"]),
        // Google Cloud Storage: the JSON API, service-account and metadata-server tokens, gs:// loads.
        .library(name: "WebImageGCS", targets: ["WebImageGCS"]),
        // The crawler's parts: caption lists read a record at a time, robots.txt and X-Robots-Tag, row rules.
        .library(name: "WebImageDataset", targets: ["WebImageDataset"]),
        // The image proxy (imgproxy's URL format) on Hummingbird: the only module that links it.
        .library(name: "WebImageServer", targets: ["WebImageServer"]),
        // The image proxy as Vapor middleware: empty unless the Vapor trait is on (see `traits`).
        .library(name: "WebImageVapor", targets: ["WebImageVapor"]),
        // The test kit: a scripted origin server on 127.0.0.1 for testing code that loads images.
        .library(name: "WebImageTesting", targets: ["WebImageTesting"]),
        .executable(name: "webimage", targets: ["webimage"]),
    ],
    traits: [
        // Off by default: only an application that enables it (`traits: ["Vapor"]` on its
        // `.package` line) resolves and builds Vapor; WebImageVapor is empty without it.
        .trait(name: "Vapor", description: "The image proxy as Vapor middleware (the WebImageVapor product)."),
        // Off by default: FFmpeg's libraries (libavformat, libavcodec, libswscale; Debian's
        // libavformat-dev, libavcodec-dev, libswscale-dev) are needed only by an application
        // that enables it. Without it videos are recognised and refused as unsupported.
        .trait(name: "Video", description: "Frames of MP4, QuickTime and WebM videos as images, through FFmpeg (VideoCoder)."),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // No traits: the default ones bring swift-configuration and full Foundation, which the
        // server does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Only with the Vapor trait (its products are named under `.when(traits: ["Vapor"])` alone).
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ]
        // Traces over OTLP/HTTP for the command only (the libraries stay on swift-distributed-tracing);
        // the gRPC exporter's trait is off, which keeps grpc-swift out of the build.
        + (withOTel ? [.package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"])] : []),
    targets: [
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Parquet's codecs besides gzip (zlib): the lists of LAION, COYO and DataComp use them.
        .systemLibrary(name: "CSnappy", pkgConfig: "snappy", providers: [.apt(["libsnappy-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(name: "CAVIF", pkgConfig: "libavif", providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "CHEIF", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CJXL", pkgConfig: "libjxl", providers: [.apt(["libjxl-dev"])]),
        .systemLibrary(name: "CRSVG", pkgConfig: "librsvg-2.0", providers: [.apt(["librsvg2-dev"])]),
        .target(
            name: "CWebImageCodecs",
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png16"), .linkedLibrary("tiff"), .linkedLibrary("deflate")]
        ),
        // FFmpeg read from memory (a custom I/O context) for the video coder: only with the Video
        // trait. Its source compiles to nothing where FFmpeg's headers are absent.
        .target(
            name: "CWebImageVideo",
            linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swscale"), .linkedLibrary("avutil")]
        ),
        // The server's one piece of C: listening sockets closed by a crash signal (a signal
        // handler must not run Swift).
        .target(name: "CWebImageServer"),
        // What every layer shares and nothing else: the error type, telemetry, locks, the work
        // pool, coalescing, HTTP dates, file I/O. Links no image library and no networking.
        .target(
            name: "WebImageCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        // Image model, coders, transformers and the C shims: no networking, no storage.
        .target(
            name: "WebImageCodecs",
            dependencies: [
                "WebImageCore",
                "CTurboJPEG", "CPNG", "CGIF", "CWebP", "CWebImageCodecs", "CZlib", "CLCMS2", "CAVIF", "CHEIF", "CJXL", "CRSVG",
                .target(name: "CWebImageVideo", condition: .when(traits: ["Video"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        // The memory and disk caches and their keys.
        .target(
            name: "WebImageCaching",
            dependencies: [
                "WebImageCore", "WebImageCodecs",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),
        // The loaders: the only module that links AsyncHTTPClient, SwiftNIO and TLS.
        .target(
            name: "WebImageDownloader",
            dependencies: [
                "WebImageCore", "WebImageCodecs",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        // The S3 client: SigV4 over AsyncHTTPClient and swift-crypto (no AWS SDK), the object
        // operations, the AWS credential chain. Its transport errors map as the downloader's do.
        .target(
            name: "WebImageS3",
            dependencies: [
                "WebImageCore", "WebImageDownloader",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        // The Google Cloud Storage client: the JSON API over AsyncHTTPClient (no Google SDK), OAuth
        // tokens from a service account's key (a JWT signed with RS256) or the metadata server.
        .target(
            name: "WebImageGCS",
            dependencies: [
                "WebImageCore", "WebImageDownloader",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        // The manager, the ImageCache front, the prefetcher and targets; re-exports the rest.
        .target(
            name: "WebImage",
            dependencies: [
                "WebImageCore", "WebImageCodecs", "WebImageCaching", "WebImageDownloader",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        // The crawler as a library (issue 61, its first part): lists (txt, CSV, TSV, JSON Lines,
        // JSON, gzip), robots.txt and X-Robots-Tag, which rows may be loaded. No server, no
        // argument parsing.
        .target(
            name: "WebImageDataset",
            dependencies: [
                "WebImage", "WebImageS3", "WebImageGCS", "CZlib", "CSnappy", "CZstd", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        // The image proxy server: imgproxy-compatible URLs, signing, policy and HTTP semantics.
        .target(
            name: "WebImageServer",
            dependencies: [
                "WebImage", "WebImageS3", "WebImageGCS", "CWebImageServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "WebImageTesting",
            dependencies: [
                "CZlib",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "webimage",
            dependencies: [
                "WebImage", "WebImageServer", "WebImageS3", "WebImageGCS", "WebImageDataset", "CZlib", "CWebImageCodecs",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ] + (withOTel ? [.product(name: "OTel", package: "swift-otel")] : []),
            resources: [.copy("DemoImages")],
            // A condition of our own rather than canImport(OTel): a scratch folder that once built
            // the module still finds it, though the product is no longer linked.
            swiftSettings: strictSwift + (withOTel ? [.define("WEBIMAGE_OTEL")] : [])
        ),
        .executableTarget(
            name: "WebImageTestChild",
            dependencies: ["WebImage", "WebImageTesting"],
            path: "Tests/WebImageTestChild",
            swiftSettings: strictSwift
        ),
        // What the test targets share: the fixtures (one copy, read through `Fixture`), temporary
        // directories, and the downloader's, manager's and proxy's harnesses. Not a product.
        .target(
            name: "WebImageTestSupport",
            dependencies: [
                "WebImage", "WebImageCore", "WebImageDownloader", "WebImageServer", "WebImageS3", "WebImageGCS", "WebImageTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Tests/WebImageTestSupport",
            resources: [.copy("Fixtures")],
            swiftSettings: strictSwift
        ),
        // A test target per module, each with the module's own dependencies.
        .testTarget(
            name: "WebImageCoreTests",
            dependencies: [
                "WebImageCore", "WebImageCodecs", "WebImageTesting", "WebImageTestSupport",
            ],
            swiftSettings: strictSwift
        ),
        // The codecs and transformers (and the cache keys transformers make); WebImageTestChild
        // decodes in a child process.
        .testTarget(
            name: "WebImageCodecsTests",
            dependencies: [
                "WebImageCodecs", "WebImageCaching", "CWebImageCodecs", "CZlib", "WebImageTesting", "WebImageTestSupport", "WebImageTestChild",
            ],
            resources: [.copy("hdr_reference.py"), .copy("high_bit_depth.py"), .copy("apple_heic.py"), .copy("jxl_gain_map.py")],
            swiftSettings: strictSwift
        ),
        // The memory and disk tiers; WebImageTestChild shares a disk cache from other processes.
        .testTarget(
            name: "WebImageCachingTests",
            dependencies: [
                "WebImageCaching", "WebImageTesting", "WebImageTestSupport", "WebImageTestChild",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),
        // The downloader, its policies and the address guard, against the origin server and squid.
        .testTarget(
            name: "WebImageDownloaderTests",
            dependencies: [
                "WebImageDownloader", "WebImageTesting", "WebImageTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        // The image proxy in a Vapor application: compiled only with the Vapor trait.
        .target(
            name: "WebImageVapor",
            dependencies: [
                "WebImageServer", .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        // The Vapor middleware in process (VaporTesting) and over a socket: run with `--traits Vapor`.
        .testTarget(
            name: "WebImageVaporTests",
            dependencies: [
                "WebImageVapor", "WebImageServer", "WebImage", "WebImageTesting", "WebImageTestSupport",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "VaporTesting", package: "vapor", condition: .when(traits: ["Vapor"])),
            ],
            swiftSettings: strictSwift
        ),
        // The manager, the prefetcher and targets; the README's examples.
        .testTarget(
            name: "WebImageTests",
            dependencies: [
                "WebImage", "WebImageServer", "WebImageTesting", "WebImageTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The image proxy: imgproxy's URLs and options, its routes, limits and processes.
        .testTarget(
            name: "WebImageServerTests",
            dependencies: [
                "WebImageServer", "WebImage", "WebImageS3", "webimage", "WebImageTesting", "WebImageTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        // The `webimage` command: prefetch and datasets, fetch, serve's configuration, S3 lists.
        .testTarget(
            name: "WebImageCommandTests",
            dependencies: [
                "webimage", "WebImage", "WebImageServer", "WebImageS3", "WebImageDataset", "WebImageTesting", "WebImageTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [.copy("Resources/read_shards.py")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WebImageDatasetTests",
            dependencies: ["WebImageDataset", "WebImage", "WebImageTesting", "WebImageTestSupport"],
            resources: [.copy("make_parquet.py"), .copy("blur_reference.py"), .copy("read_parquet.py")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WebImageGCSTests",
            dependencies: [
                "WebImageGCS", "WebImageCore", "WebImageTesting", "WebImage", "WebImageTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WebImageS3Tests",
            dependencies: [
                "WebImageS3", "WebImageCore", "WebImageTesting", "WebImage", "WebImageTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [.copy("aws4_testsuite"), .copy("botocore_sign.py")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WebImageTestingTests",
            dependencies: [
                "WebImageTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
