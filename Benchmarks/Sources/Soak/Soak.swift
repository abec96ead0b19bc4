import Foundation
import WebImage
import WebImageTesting

/// A long run in one process that fails if memory keeps growing: codecs, transforms and manager
/// loads, each split into rounds so that every workload runs in every round, and the resident set
/// sampled after each round. The first rounds are warm-up (caches fill, pools and arenas reach
/// their working size); after them the resident set may grow by at most 5% to the end.
/// Run by `scripts/soak.sh`; figures in docs/benchmarks.md.
@main
enum Soak {
    struct Plan {
        var rounds = 10
        var warmUpRounds = 2
        var codecCyclesPerFormat = 10_000
        var transformPipelines = 10_000
        var managerLoads = 20_000
        var allowedGrowth = 0.05
    }

    static func main() async {
        var plan = Plan()
        // `--scale F` multiplies every count (a quick check of the script: --scale 0.05).
        if let index = CommandLine.arguments.firstIndex(of: "--scale"), index + 1 < CommandLine.arguments.count,
            let scale = Double(CommandLine.arguments[index + 1])
        {
            plan.codecCyclesPerFormat = Int(Double(plan.codecCyclesPerFormat) * scale)
            plan.transformPipelines = Int(Double(plan.transformPipelines) * scale)
            plan.managerLoads = Int(Double(plan.managerLoads) * scale)
        }
        do {
            exit(try await run(plan) ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("soak failed: \(error)\n".utf8))
            exit(2)
        }
    }

    static func run(_ plan: Plan) async throws -> Bool {
        let codecs = try CodecWorkload()
        let transforms = TransformWorkload()
        let loads = try await LoadWorkload()
        print("round  codec cycles  transforms  loads   seconds  resident MB")
        var samples: [Int] = []
        let start = ContinuousClock.now
        for round in 1...plan.rounds {
            let roundStart = ContinuousClock.now
            try codecs.run(cyclesPerFormat: plan.codecCyclesPerFormat / plan.rounds)
            try transforms.run(plan.transformPipelines / plan.rounds)
            try await loads.run(plan.managerLoads / plan.rounds)
            let resident = ResidentMemory.current() ?? 0
            samples.append(resident)
            let seconds = (ContinuousClock.now - roundStart).seconds
            print(
                String(
                    format: "%5d  %12d  %10d  %5d  %8.1f  %11.1f%@", round, codecs.cycles, transforms.pipelines, loads.loads, seconds,
                    Double(resident) / 1_048_576, round == plan.warmUpRounds ? "  (end of warm-up)" : ""))
        }
        try await loads.finish()
        let baseline = samples[plan.warmUpRounds - 1]
        let growth = Double(samples.last! - baseline) / Double(baseline)
        let passed = growth <= plan.allowedGrowth
        print(
            String(
                format:
                    "resident set after warm-up %.1f MB, at the end %.1f MB: %+.1f%% (allowed %.0f%%), peak %.1f MB, %d load failures, %.0f s: %@",
                Double(baseline) / 1_048_576, Double(samples.last!) / 1_048_576, growth * 100, plan.allowedGrowth * 100,
                Double(samples.max()!) / 1_048_576, loads.failures, (ContinuousClock.now - start).seconds, passed ? "PASS" : "FAIL"))
        return passed
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// A test picture: a gradient with a moving disc and, where asked, translucent edges, so that
/// every codec has real detail and alpha to carry.
func testPicture(width: Int, height: Int, seed: Int, alpha: Bool) -> PixelBuffer {
    var rgba = [UInt8](repeating: 0, count: width * height * 4)
    let centreX = (seed * 37) % width
    let centreY = (seed * 53) % height
    for y in 0..<height {
        for x in 0..<width {
            let offset = (y * width + x) * 4
            let inDisc = (x - centreX) * (x - centreX) + (y - centreY) * (y - centreY) < width * height / 16
            rgba[offset] = UInt8((x * 255) / max(1, width - 1))
            rgba[offset + 1] = UInt8((y * 255) / max(1, height - 1))
            rgba[offset + 2] = inDisc ? 230 : UInt8((seed * 29) & 0xFF)
            rgba[offset + 3] = alpha && (x < 4 || y < 4) ? 96 : 255
        }
    }
    return PixelBuffer(width: width, height: height, straightRGBA: rgba)
}

/// Decode + encode cycles of every format the coders write: JPEG, PNG, WebP and GIF stills, and
/// APNG, animated GIF and animated WebP.
final class CodecWorkload {
    private let cases: [(format: ImageFormat, image: Image)]
    private(set) var cycles = 0

    init() throws {
        let still = Image(pixels: testPicture(width: 64, height: 64, seed: 1, alpha: true))
        let frames = (0..<3).map {
            ImageFrame(pixels: testPicture(width: 64, height: 64, seed: $0, alpha: true), duration: .milliseconds(80))
        }
        let animation = Image(frames: frames, loopCount: 0, hasAlpha: true)
        cases = [(.jpeg, still), (.png, still), (.webP, still), (.gif, still), (.png, animation), (.gif, animation), (.webP, animation)]
    }

    func run(cyclesPerFormat: Int) throws {
        for (format, image) in cases {
            for _ in 0..<cyclesPerFormat {
                let encoded = try CodersManager.shared.encode(image, as: format, options: EncodeOptions(quality: 0.8))
                let decoded = try CodersManager.shared.decode(encoded)
                precondition(decoded.frames.count == image.frames.count, "a \(format) round trip lost frames")
                cycles += 1
            }
        }
    }
}

/// Transform pipelines over a 256x192 picture, several specs in turn.
final class TransformWorkload {
    private let source = Image(pixels: testPicture(width: 256, height: 192, seed: 7, alpha: true))
    private let specs: [any ImageTransformer] = [
        "resize:128x128:aspectfill,round:16",
        "crop:200x150+10+10,resize:100x75,blur:2",
        "resize:300x200:aspectfit,rotate:90,flip:h",
        "centercrop:1:1,rotate:30,tint:#ff000040,round:60:all:2:#00ff00ff",
    ].map { try! TransformSpec.parse($0) }
    private(set) var pipelines = 0

    func run(_ count: Int) throws {
        for index in 0..<count {
            guard specs[index % specs.count].transform(source, forKey: "soak") != nil else {
                throw WebImageError(.transformFailed, "a pipeline gave nothing")
            }
            pipelines += 1
        }
    }
}

/// Manager loads from a local origin through a small memory cache and a small disk cache, so
/// that both evict all the time: 400 distinct images in four formats, half the loads asking for
/// a thumbnail variant, and one path in fifty answering 404 (the error path, retried).
final class LoadWorkload {
    private let origin: OriginServer
    private let downloader = ImageDownloader()
    private let manager: ImageManager
    private let directory: URL
    private let paths: [String]
    private(set) var loads = 0
    private(set) var failures = 0
    private var next = 0

    init() async throws {
        origin = try await OriginServer.start(keepsLog: false)
        let formats: [(ImageFormat, String)] = [(.jpeg, "image/jpeg"), (.png, "image/png"), (.webP, "image/webp"), (.gif, "image/gif")]
        var paths: [String] = []
        for index in 0..<400 {
            let path = "/image-\(index)"
            if index % 50 == 49 {
                origin.route(path, .status(404))
            } else {
                let (format, type) = formats[index % formats.count]
                let image = Image(pixels: testPicture(width: 160, height: 120, seed: index, alpha: false))
                origin.route(path, .ok([UInt8](try CodersManager.shared.encode(image, as: format)), contentType: type))
            }
            paths.append(path)
        }
        self.paths = paths
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-soak-\(getpid())")
        let memory = MemoryCache<Image>(configuration: MemoryCacheConfiguration(costLimit: 2 * 1024 * 1024))
        let disk = try DiskCache(directory: directory, configuration: DiskCacheConfiguration(sizeLimit: 1024 * 1024, maximumAge: nil))
        manager = ImageManager(
            cache: ImageCache(memory: memory, disk: disk), loader: LoadersManager(loaders: [downloader]),
            configuration: ImageManagerConfiguration())
    }

    /// `count` loads, eight at a time.
    func run(_ count: Int) async throws {
        let urls = (0..<count).map { offset in origin.url(paths[(next + offset * 7) % paths.count]) }
        next += count * 7
        let manager = manager
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            var outcomes: [Bool] = []
            for (index, url) in urls.enumerated() {
                if index >= 8, let outcome = await group.next() { outcomes.append(outcome) }
                group.addTask {
                    var context = LoadContext()
                    if index % 2 == 1 { context.imageThumbnailPixelSize = (width: 64, height: 48) }
                    return (try? await manager.image(for: url, options: [.retryFailed], context: context)) != nil
                }
            }
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        loads += outcomes.count
        failures += outcomes.filter { !$0 }.count
    }

    func finish() async throws {
        try await downloader.shutdown()
        try await origin.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
