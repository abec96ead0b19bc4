import Dispatch
import Foundation
import WebImage

/// Runs one named workload on an input file and prints `{"operations": N, "seconds": S}`, the
/// format every side of a `scripts/compare` comparison prints, so the runner can set ours beside
/// a peer tool on the same input. Built in release by `scripts/compare/run.py`.
@main
enum CompareWorkloads {
    static func main() async {
        do {
            try await run()
        } catch {
            FileHandle.standardError.write(Data("CompareWorkloads failed: \(error)\n".utf8))
            exit(1)
        }
    }

    private static func run() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 3, let workload = arguments.first, let rounds = Int(arguments.last!) else {
            FileHandle.standardError.write(Data("usage: CompareWorkloads WORKLOAD INPUT ROUNDS\n".utf8))
            exit(2)
        }
        let input = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments.dropFirst().first!)))
        switch workload {
        case "sniff":
            report(try measure(rounds: rounds) { sniffRecords(input) })
        case "memory-hit":
            report(
                try memoryHitWorkload(
                    threads: Int(String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 1,
                    rounds: rounds))
        case "download":
            report(try await downloadWorkload(urlList: input, concurrency: rounds))
        case "download-guarded":
            // Loopback is where the benchmark's nginx is: allowed, so that every connection goes
            // through the guard and is judged, and succeeds.
            let policy = AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.0/8")!])
            report(try await downloadWorkload(urlList: input, concurrency: rounds, addressPolicy: policy))
        case "download-new-connections":
            report(try await downloadWorkload(urlList: input, concurrency: rounds, newConnectionEach: true))
        case "download-new-connections-guarded":
            let policy = AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.0/8")!])
            report(try await downloadWorkload(urlList: input, concurrency: rounds, addressPolicy: policy, newConnectionEach: true))
        case "download-urlsession":
            let urls = String(decoding: input, as: UTF8.self).split(separator: "\n").compactMap { URL(string: String($0)) }
            report(try await URLSessionWorkload.run(urls: urls, concurrency: rounds))
        case "download-ahc":
            let urls = String(decoding: input, as: UTF8.self).split(separator: "\n").compactMap { URL(string: String($0)) }
            report(try await RawClientWorkload.run(urls: urls, concurrency: rounds))
        case "download-ahc-configured":
            let urls = String(decoding: input, as: UTF8.self).split(separator: "\n").compactMap { URL(string: String($0)) }
            report(try await RawClientWorkload.run(urls: urls, concurrency: rounds, downloaderSettings: true))
        case "download-ahc-delegate":
            let urls = String(decoding: input, as: UTF8.self).split(separator: "\n").compactMap { URL(string: String($0)) }
            report(try await RawClientWorkload.runWithDelegate(urls: urls, concurrency: rounds))
        case "diskcache":
            report(try diskCacheWorkload(spec: input, rounds: rounds))
        case "decode":
            report(try decodeWorkload(input, thumbnail: nil, rounds: rounds))
        case "progressive":
            report(try progressiveWorkload(input, pieceSize: 16 * 1024, rounds: rounds))
        case "thumbnail":
            report(try decodeWorkload(input, thumbnail: ThumbnailSize(width: 300, height: 300), rounds: rounds))
        case "resize":
            report(try transformWorkload(input, ResizingTransformer(width: 300, height: 200, filter: .lanczos3), rounds: rounds))
        case "blur":
            report(try transformWorkload(input, BlurTransformer(radius: 10), rounds: rounds))
        case "encode-avif":
            report(try encodeWorkload(input, as: .avif, options: EncodeOptions(quality: 0.75, avifSpeed: 6), rounds: rounds))
        case "color":
            report(try colorWorkload(input, rounds: rounds))
        default:
            FileHandle.standardError.write(Data("unknown workload \(workload)\n".utf8))
            exit(2)
        }
    }

    /// Sniffs every 64-byte record of the input; returns how many were sniffed.
    private static func sniffRecords(_ input: [UInt8]) -> Int {
        input.withUnsafeBytes { bytes in
            var recognised = 0
            for start in stride(from: 0, to: bytes.count - 63, by: 64) {
                if ImageFormat(sniffing: UnsafeRawBufferPointer(rebasing: bytes[start..<start + 64])) != nil { recognised += 1 }
            }
            precondition(recognised > 0, "the input holds no image signature")
            return bytes.count / 64
        }
    }

    /// The `diskcache` workload: the input names a count and a size (`COUNT SIZE`). Each round
    /// stores COUNT values of SIZE bytes in an empty cache, then reads each back once; the time
    /// covers the sets and gets only, and every get is checked.
    private static func diskCacheWorkload(spec: [UInt8], rounds: Int) throws -> (operations: Int, seconds: Double) {
        let numbers = String(decoding: spec, as: UTF8.self).split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let (count, size) = (numbers[0], numbers[1])
        let values = (0..<count).map { index in Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) }) }
        var operations = 0
        var seconds = 0.0
        for _ in 0..<rounds {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("compare-diskcache-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = try DiskCache(directory: directory, configuration: DiskCacheConfiguration(sizeLimit: 0))
            let round = try measure(rounds: 1) {
                for index in 0..<count { try cache.store(values[index], for: "https://example.com/\(index).jpg") }
                for index in 0..<count {
                    let read = try cache.data(for: "https://example.com/\(index).jpg")
                    precondition(read == values[index], "a get returned the wrong bytes")
                }
                return 2 * count
            }
            cache.close()
            operations += round.operations
            seconds += round.seconds
        }
        return (operations, seconds)
    }

    /// The `memory-hit` workload: `threads` threads each look up 10,000 cached images (in a
    /// fixed pseudo-random order) `rounds` times through `ImageCache.memoryImage(for:)`.
    private static func memoryHitWorkload(threads: Int, rounds: Int) throws -> (operations: Int, seconds: Double) {
        let cache = ImageCache(disk: nil)
        let keys = (0..<10_000).map { CacheKey("https://images.example.com/photos/\($0)/large.jpg") }
        for (index, key) in keys.enumerated() {
            let image = Image(pixels: PixelBuffer(width: 1, height: 1, premultipliedRGBA: [UInt8(truncatingIfNeeded: index), 2, 3, 255]))
            cache.memory.insert(image, for: key, cost: 1000)
        }
        var state: UInt64 = 0x5EED
        let order = (0..<keys.count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % keys.count
        }
        return measure(rounds: 1) {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                var hits = 0
                for _ in 0..<rounds {
                    for index in order where cache.memoryImage(for: keys[index]) != nil { hits += 1 }
                }
                precondition(hits == rounds * keys.count)
            }
            return threads * rounds * keys.count
        }
    }

    /// The `download` workload: every URL of the list (one per line) through one
    /// `ImageDownloader` with `concurrency` downloads in flight, one child task per URL started
    /// all at once (the downloader queues them); each body is checked non-empty.
    /// Downloads every URL of the list, `concurrency` at a time; with `newConnectionEach`, each
    /// request asks for `Connection: close`, so that every download opens a connection (the
    /// cost of connecting, with or without the address guard).
    private static func downloadWorkload(
        urlList: [UInt8], concurrency: Int, addressPolicy: AddressPolicy? = nil, newConnectionEach: Bool = false
    ) async throws -> (operations: Int, seconds: Double) {
        let urls = String(decoding: urlList, as: UTF8.self).split(separator: "\n").compactMap { URL(string: String($0)) }
        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(
                maximumConcurrentDownloads: concurrency, addressPolicy: addressPolicy, retryPolicy: .none))
        let options = LoadRequestOptions(headers: newConnectionEach ? [("Connection", "close")] : [])
        let clock = ContinuousClock()
        let start = clock.now
        let failures = await withTaskGroup(of: Bool.self) { group in
            for url in urls {
                group.addTask { (try? await downloader.loadData(url, options: options).data.isEmpty) != false }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        let elapsed = clock.now - start
        try await downloader.shutdown()
        guard failures == 0 else { throw WebImageError(.connectionLost, "\(failures) downloads failed") }
        return (urls.count, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Decodes the input `rounds` times (at most 300 px with a thumbnail); operations are the
    /// megapixels of the source decoded, or the images for thumbnails.
    /// The `progressive` workload: the file arrives in `pieceSize` pieces, each handed to one
    /// download's progressive coder (every partial image made), then decoded whole, as the
    /// manager does at the end; operations are megapixels, as for `decode`.
    private static func progressiveWorkload(_ input: [UInt8], pieceSize: Int, rounds: Int) throws -> (operations: Double, seconds: Double) {
        let data = Data(input)
        let header = try ImageHeader(data: data)
        let timed = try measure(rounds: rounds) {
            guard let coder = CodersManager.shared.incrementalDecoder(for: data) else {
                throw WebImageError(.unsupportedFormat, "no progressive coder")
            }
            var partials = 0
            for end in stride(from: pieceSize, to: data.count, by: pieceSize) where coder.update(data.prefix(end)) != nil { partials += 1 }
            _ = try CodersManager.shared.decode(data)
            precondition(partials > 0, "no partial image")
            return 1
        }
        return (Double(timed.operations) * Double(header.pixelCount) / 1e6, timed.seconds)
    }

    private static func decodeWorkload(_ input: [UInt8], thumbnail: ThumbnailSize?, rounds: Int) throws -> (
        operations: Double, seconds: Double
    ) {
        let data = Data(input)
        let header = try ImageHeader(data: data)
        let options = DecodeOptions(thumbnail: thumbnail)
        let timed = try measure(rounds: rounds) {
            let image = try CodersManager.shared.decode(data, options: options)
            precondition(thumbnail == nil || max(image.pixelWidth, image.pixelHeight) <= 300, "the thumbnail is larger than asked")
            return 1
        }
        let perImage = thumbnail == nil ? Double(header.pixelCount) / 1e6 : 1
        return (Double(timed.operations) * perImage, timed.seconds)
    }

    /// Decodes the input image once (not timed), then transforms it `rounds` times.
    private static func transformWorkload(_ input: [UInt8], _ transformer: any ImageTransformer, rounds: Int) throws -> (
        operations: Int, seconds: Double
    ) {
        let image = try CodersManager.shared.decode(Data(input))
        return measure(rounds: rounds) {
            precondition(transformer.transform(image, forKey: "benchmark") != nil, "the transform gave no image")
            return 1
        }
    }

    /// Decodes the input once (not timed), then encodes it `rounds` times; operations are megapixels.
    private static func encodeWorkload(_ input: [UInt8], as format: ImageFormat, options: EncodeOptions, rounds: Int) throws -> (
        operations: Double, seconds: Double
    ) {
        let image = try CodersManager.shared.decode(Data(input))
        let timed = try measure(rounds: rounds) {
            let encoded = try CodersManager.shared.encode(image, as: format, options: options)
            precondition(!encoded.isEmpty, "nothing encoded")
            return 1
        }
        return (Double(timed.operations) * Double(image.pixelWidth * image.pixelHeight) / 1e6, timed.seconds)
    }

    /// Decodes the input keeping its colour profile (not timed), then converts it to sRGB
    /// `rounds` times: the conversion alone, on the same pixels as the peer's.
    private static func colorWorkload(_ input: [UInt8], rounds: Int) throws -> (operations: Int, seconds: Double) {
        let image = try CodersManager.shared.decode(Data(input), options: DecodeOptions(keepsColorProfile: true))
        precondition(image.colorProfile != nil, "the input has no colour profile")
        return measure(rounds: rounds) {
            precondition(image.convertingToSRGB().colorProfile == nil, "the conversion kept the profile")
            return 1
        }
    }

    private static func measure(rounds: Int, _ body: () throws -> Int) rethrows -> (operations: Int, seconds: Double) {
        let clock = ContinuousClock()
        var operations = 0
        let elapsed = try clock.measure {
            for _ in 0..<rounds { operations += try body() }
        }
        return (operations, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private static func report(_ result: (operations: Int, seconds: Double)) {
        print("{\"operations\": \(result.operations), \"seconds\": \(result.seconds)}")
    }

    private static func report(_ result: (operations: Double, seconds: Double)) {
        print("{\"operations\": \(result.operations), \"seconds\": \(result.seconds)}")
    }
}
