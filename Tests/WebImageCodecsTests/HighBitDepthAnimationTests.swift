import Foundation
import Testing
@testable import WebImageCodecs
import WebImageTesting
import WebImageTestSupport

/// Animations at 16 bits: an APNG's, an AVIF sequence's and an animated JPEG XL's frames kept with
/// ``DecodeOptions/keepsHighBitDepth``, and PQ frames tone-mapped from one peak. The files come from
/// high_bit_depth.py (after the PNG and APNG specifications), ffmpeg, avifenc and cjxl; the
/// expected samples from high_bit_depth.py, and from ffmpeg's reading of a file.
@Suite("High bit depth: animations kept at 16 bits, PQ ones tone-mapped from one peak")
struct HighBitDepthAnimationTests {
    static let keeping = HighBitDepthTests.keeping

    struct Composed: Decodable {
        let frames: [[Int]]
    }

    /// write-apng's frame `index` at (x, y): `sample` halved, but frame 1's first pixel is 65535.
    static func pqSample(_ x: Int, _ y: Int, _ channel: Int, frame: Int) -> UInt16 {
        guard channel < 3 else { return 65535 }
        return frame == 1 && x == 0 && y == 0 ? 65535 : HighBitDepthTests.sample(x, y, channel) >> 1
    }

    static func data(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("a 16-bit APNG is composed at 16 bits: a frame blended over another and disposed to the background, as APNG 1.0 computes it")
    func composedAtSixteenBits() async throws {
        let directory = try TemporaryDirectory("apng16-over")
        let path = directory.url.appendingPathComponent("over.png").path
        let output = try #require(try await HighBitDepthTests.python(["write-apng-over", path, "7", "5"]).last)
        let expected = try JSONDecoder().decode(Composed.self, from: Data(output.utf8)).frames
        let kept = try CodersManager.shared.decode(try Self.data(path), options: Self.keeping)
        #expect(kept.frames.count == 3 && kept.frames.allSatisfy(\.pixels.isHighBitDepth))
        for (index, frame) in kept.frames.enumerated() {
            let differences = zip(frame.pixels.samples16, expected[index]).map { abs(Int($0) - $1) }
            // Replaced and disposed pixels are copied; blended ones are computed in Float, as the
            // 8-bit canvas's are, on the 0...255 scale: within a 16-bit level of the exact value.
            #expect(differences.max() ?? 99 <= (index == 1 ? 1 : 0), "frame \(index): \(differences.max() ?? -1)")
        }
        // Without the option the same file is composed at 8 bits: each sample within a level of
        // the 16-bit composition's, rounded.
        let plain = try CodersManager.shared.decode(try Self.data(path))
        #expect(plain.frames.count == 3 && !plain.isHighBitDepth)
        for (index, frame) in plain.frames.enumerated() {
            let differences = zip(frame.pixels.bytes, expected[index]).map { abs(Int($0) - ($1 + 128) / 257) }
            #expect(differences.max() ?? 99 <= 1, "frame \(index) at 8 bits")
        }
    }

    @Test("ffmpeg's 16-bit APNG (frames of changed regions) reads as ffmpeg reads it, and ours, written at 16 bits, reads back the same")
    func ffmpegRoundTrip() async throws {
        let directory = try TemporaryDirectory("apng16-ffmpeg")
        let source = directory.url.appendingPathComponent("ffmpeg.png").path
        // testsrc2 moves a few shapes: ffmpeg stores each later frame as the region that changed.
        let alpha = "geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(lt(X,20),255,90+Y)'"
        _ = try await Self.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=5:duration=1", "-vf", "format=rgba,\(alpha),format=rgba64be", "-plays", "0",
            "-f", "apng", source,
        ])
        let reference = try await Self.ffmpegFrames(source, pixels: 64 * 48, in: directory)
        let kept = try CodersManager.shared.decode(try Self.data(source), options: Self.keeping)
        #expect(kept.frames.count == 5 && kept.frames.map(\.pixels.samples16) == reference)
        let ours = directory.url.appendingPathComponent("ours.png").path
        try CodersManager.shared.encode(kept, as: .png).write(to: URL(fileURLWithPath: ours))
        let read = try await HighBitDepthTests.read(try Self.data(ours), in: directory)
        #expect(read.bitDepth == 16 && read.colorType == 6)
        #expect(try await Self.ffmpegFrames(ours, pixels: 64 * 48, in: directory) == reference)
    }

    @Test("an HDR APNG's frames are tone-mapped together, from the brightest frame's peak: the same codes give the same pixels in each")
    func hdrAPNG() async throws {
        let directory = try TemporaryDirectory("apng16-pq")
        let path = directory.url.appendingPathComponent("pq.png").path
        _ = try await HighBitDepthTests.python(["write-apng", path, "12", "5", "9", "16", "0", "1"])
        try await Self.expectOnePeak(animation: path, stills: ["\(path)-0.png", "\(path)-1.png"])
        // Kept, the frames are the file's samples, and are written as a 16-bit APNG with its cICP.
        let kept = try CodersManager.shared.decode(try Self.data(path), options: Self.keeping)
        try Self.expectSamples(kept, tolerance: 0)
        let written = try CodersManager.shared.encode(kept, as: .png)
        let read = try await HighBitDepthTests.read(written, in: directory)
        #expect(read.bitDepth == 16 && read.cicp == [9, 16, 0, 1])
        #expect(try CodersManager.shared.decode(written, options: Self.keeping).frames.map(\.pixels) == kept.frames.map(\.pixels))
    }

    @Test("a 10-bit PQ AVIF sequence and a 16-bit PQ JPEG XL animation: frames kept at their depth, or tone-mapped from one peak")
    func avifAndJXL() async throws {
        let directory = try TemporaryDirectory("anim16")
        let path = directory.url.appendingPathComponent("pq.png").path
        _ = try await HighBitDepthTests.python(["write-apng", path, "12", "5", "9", "16", "0", "1"])
        let frames = ["\(path)-0.png", "\(path)-1.png"]
        func file(_ name: String) -> String { directory.url.appendingPathComponent(name).path }
        // Lossless, each frame alone too: avifenc's 10 bits in RGB (matrix 0); cjxl's PQ encoding
        // of the APNG, read as BT.2100 PQ (hdr_reference.py makes its JPEG XL so).
        _ = try await HighBitDepthTests.run("avifenc", ["-l", "-d", "10", "--cicp", "9/16/0"] + frames + [file("pq.avif")])
        let jxlSpace = ["-d", "0", "-x", "color_space=RGB_D65_202_Rel_PeQ"]
        _ = try await HighBitDepthTests.run("cjxl", jxlSpace + [path, file("pq.jxl")])
        for index in 0..<2 {
            _ = try await HighBitDepthTests.run("avifenc", ["-l", "-d", "10", "--cicp", "9/16/0", frames[index], file("\(index).avif")])
            _ = try await HighBitDepthTests.run("cjxl", jxlSpace + [frames[index], file("\(index).jxl")])
        }
        for (name, tolerance) in [("avif", 33), ("jxl", 0)] {
            try await Self.expectOnePeak(animation: file("pq.\(name)"), stills: [file("0.\(name)"), file("1.\(name)")])
            let kept = try CodersManager.shared.decode(try Self.data(file("pq.\(name)")), options: Self.keeping)
            #expect(kept.sourceColor?.transfer == ColorDescription.perceptualQuantizer, "\(name)")
            // A 10-bit level is 64 of 65535: libavif's samples are within half of one of the 16-bit
            // source's; 8 bits would be up to 128 off.
            try Self.expectSamples(kept, tolerance: tolerance)
        }
    }

    @Test("frames held at 16 bits are charged twice: of an animation over the budget at 16 bits, the first frames that fit are kept")
    func framesChargedTwice() async throws {
        let directory = try TemporaryDirectory("apng16-limit")
        let path = directory.url.appendingPathComponent("pq.png").path
        _ = try await HighBitDepthTests.python(["write-apng", path, "12", "5", "9", "16", "0", "1"])
        var options = Self.keeping
        options.limits.maximumPixelCount = 12 * 5 * 4
        #expect(try CodersManager.shared.decode(try Self.data(path), options: options).frames.count == 2)
        options.limits.maximumPixelCount = 12 * 5 * 4 - 1
        let cut = try CodersManager.shared.decode(try Self.data(path), options: options)
        #expect(cut.frames.count == 1 && cut.warnings.contains { $0.contains("kept the first 1 of 2 frames") })
    }

    /// Decoded without the option, `animation`'s frames share the peak of its brighter frame 1:
    /// they are equal but for frame 1's first pixel, frame 1 is what its still gives alone, and
    /// frame 0 alone (tone-mapped from its own, dimmer, peak) is brighter, nowhere darker.
    static func expectOnePeak(animation: String, stills: [String]) async throws {
        let image = try CodersManager.shared.decode(try data(animation))
        #expect(image.frames.count == 2 && !image.isHighBitDepth, "\(animation)")
        let (first, second) = (image.frames[0].pixels.bytes, image.frames[1].pixels.bytes)
        #expect(first.indices.filter { first[$0] != second[$0] }.allSatisfy { $0 < 3 }, "\(animation): only the first pixel differs")
        let alone = try stills.map { try CodersManager.shared.decode(try data($0)).pixels.bytes }
        #expect(second == alone[1], "\(animation): frame 1 as its still")
        // The EETF leaves dark values nearly as they are: 65 of the 180 colour samples differ.
        let brighter = zip(alone[0], first).filter { $0 > $1 }.count
        let darker = zip(alone[0], first).filter { $0 < $1 }.count
        #expect(
            brighter > 40 && darker == 0, "\(animation): frame 0 alone is brighter (\(brighter) and \(darker) of \(first.count) samples)")
    }

    /// `image`'s frames are 16-bit and write-apng's samples, within `tolerance`.
    static func expectSamples(_ image: Image, tolerance: Int) throws {
        #expect(image.frames.count == 2 && image.frames.allSatisfy(\.pixels.isHighBitDepth))
        for (index, frame) in image.frames.enumerated() {
            let samples = frame.pixels.samples16
            var largest = 0
            for y in 0..<5 {
                for x in 0..<12 {
                    for channel in 0..<4 {
                        let expected = Int(pqSample(x, y, channel, frame: index))
                        largest = max(largest, abs(Int(samples[(y * 12 + x) * 4 + channel]) - expected))
                    }
                }
            }
            #expect(largest <= tolerance, "frame \(index): \(largest) of 65535")
        }
    }

    static func ffmpeg(_ arguments: [String]) async throws -> [String] {
        try await HighBitDepthTests.run("ffmpeg", ["-v", "error", "-y"] + arguments)
    }

    /// Every frame of the APNG at `path`, of `pixels` pixels, as ffmpeg composes it, 16-bit RGBA.
    static func ffmpegFrames(_ path: String, pixels: Int, in directory: TemporaryDirectory) async throws -> [[UInt16]] {
        let raw = directory.url.appendingPathComponent("frames-\(UUID().uuidString).raw")
        _ = try await ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "rgba64le", raw.path])
        let bytes = try Data(contentsOf: raw)
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)).map { UInt16(littleEndian: $0) } }
        let frame = pixels * 4
        return stride(from: 0, to: samples.count, by: frame).map { Array(samples[$0..<min($0 + frame, samples.count)]) }
    }
}
