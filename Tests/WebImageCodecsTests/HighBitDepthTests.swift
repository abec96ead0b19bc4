import CLCMS2
import Foundation
import Testing
@testable import WebImageCodecs
import WebImageTesting
import WebImageTestSupport

/// 16-bit pixels (``DecodeOptions/keepsHighBitDepth``) through the decoder, the transforms that
/// keep them, and the PNG encoder. The files are written and read back by high_bit_depth.py, a reader of
/// its own after the PNG specification, so no value here is checked by our own decoder alone.
@Suite("High bit depth: 16-bit PNG kept through decode, transforms and encode")
struct HighBitDepthTests {
    struct Read: Decodable {
        let bitDepth: Int
        let colorType: Int
        let cicp: [Int]?
        let sRGB: Bool
        let width: Int
        let height: Int
        let samples: [Int]
    }

    /// high_bit_depth.py's `sample(x, y, channel)`.
    static func sample(_ x: Int, _ y: Int, _ channel: Int) -> UInt16 {
        let value = (x * 7919 + y * 104_729 + channel * 15_485_863) % 65536
        return UInt16(channel == 3 ? max(value, 1) : value)
    }

    static func python(_ arguments: [String]) async throws -> [String] {
        let script = try #require(Bundle.module.url(forResource: "high_bit_depth", withExtension: "py"))
        let python = TestPython.command
        let process = try ChildProcess(python.executable, python.arguments + [script.path] + arguments)
        let status = try await process.waitForExit()
        #expect(status.status == 0, "high_bit_depth.py \(arguments.first ?? ""): \(process.lines.suffix(5))")
        return process.lines
    }

    /// A high_bit_depth.py file of `width` x `height`, RGBA when `alpha`, with `cicp` when given.
    static func written(_ directory: TemporaryDirectory, _ width: Int, _ height: Int, alpha: Bool, cicp: [Int] = []) async throws -> Data {
        let path = directory.url.appendingPathComponent("w\(width)h\(height)a\(alpha)c\(cicp.count).png").path
        _ = try await python(["write", path, String(width), String(height), alpha ? "1" : "0"] + cicp.map(String.init))
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    static func read(_ data: Data, in directory: TemporaryDirectory) async throws -> Read {
        let path = directory.url.appendingPathComponent("read-\(UUID().uuidString).png").path
        try data.write(to: URL(fileURLWithPath: path))
        let output = try #require(try await python(["read", path]).last)
        return try JSONDecoder().decode(Read.self, from: Data(output.utf8))
    }

    static let keeping: DecodeOptions = {
        var options = DecodeOptions()
        options.keepsHighBitDepth = true
        return options
    }()

    @Test("a 16-bit PNG decodes to its own samples, and encodes to a 16-bit PNG with the same ones, RGB and RGBA")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory("png16")
        for alpha in [false, true] {
            let image = try CodersManager.shared.decode(try await Self.written(directory, 13, 7, alpha: alpha), options: Self.keeping)
            #expect(image.pixels.isHighBitDepth && image.pixels.bitsPerSample == 16)
            #expect(image.sourceColor?.bitDepth == 16)
            let samples = image.pixels.samples16
            for y in 0..<7 {
                for x in 0..<13 {
                    for channel in 0..<4 {
                        let expected = channel == 3 && !alpha ? 65535 : Self.sample(x, y, channel)
                        #expect(samples[(y * 13 + x) * 4 + channel] == expected, "(\(x), \(y)) channel \(channel)")
                    }
                }
            }
            let encoded = try CodersManager.shared.encode(image, as: .png)
            let read = try await Self.read(encoded, in: directory)
            #expect(read.bitDepth == 16 && read.colorType == (alpha ? 6 : 2) && read.cicp == nil && read.sRGB)
            let channels = alpha ? 4 : 3
            let expected = (0..<7).flatMap { y in (0..<13).flatMap { x in (0..<channels).map { Int(Self.sample(x, y, $0)) } } }
            #expect(read.samples == expected)
        }
    }

    @Test("without keepsHighBitDepth the same file is 8-bit, each sample rounded from 16 bits")
    func eightBitByDefault() async throws {
        let directory = try TemporaryDirectory("png16")
        let data = try await Self.written(directory, 9, 5, alpha: true)
        let eight = try CodersManager.shared.decode(data)
        let kept = try CodersManager.shared.decode(data, options: Self.keeping)
        #expect(!eight.pixels.isHighBitDepth && eight.pixels.bytes.count == 9 * 5 * 4)
        #expect(kept.pixels.reducedToEightBits(describedBy: kept.sourceColor) == eight.pixels)
        let reduced = kept.reducedToEightBits()
        #expect(!reduced.isHighBitDepth && reduced.pixels.pixel(x: 2, y: 3).red == UInt8((UInt32(Self.sample(2, 3, 0)) + 128) / 257))
    }

    @Test("a PQ PNG keeps its code values and its cICP at 16 bits; made 8-bit or written as JPEG, it is tone-mapped as a plain decode is")
    func hdrKept() async throws {
        let directory = try TemporaryDirectory("png16")
        let data = try await Self.written(directory, 8, 4, alpha: false, cicp: [9, 16, 0, 1])
        let kept = try CodersManager.shared.decode(data, options: Self.keeping)
        #expect(kept.pixels.isHighBitDepth && kept.sourceColor?.isHDR == true)
        #expect(kept.pixels.pixel16(x: 3, y: 2).green == Self.sample(3, 2, 1), "code values, not tone-mapped")
        let read = try await Self.read(try CodersManager.shared.encode(kept, as: .png), in: directory)
        #expect(read.bitDepth == 16 && read.cicp == [9, 16, 0, 1] && !read.sRGB)
        #expect(read.samples[(2 * 8 + 3) * 3 + 1] == Int(Self.sample(3, 2, 1)))
        let rendered = try CodersManager.shared.decode(data)
        #expect(kept.reducedToEightBits().pixels == rendered.pixels)
        let jpeg = try CodersManager.shared.decode(try CodersManager.shared.encode(kept, as: .jpeg))
        let direct = try CodersManager.shared.decode(try CodersManager.shared.encode(rendered, as: .jpeg))
        #expect(jpeg.pixels == direct.pixels, "the JPEG encoder is given the tone-mapped picture")
    }

    @Test("resizing keeps 16 bits: a flat colour stays exact, and the result rounds to the 8-bit resize's within a level")
    func resize() async throws {
        let flat = PixelBuffer(
            width: 40, height: 30,
            straightRGBA16: [UInt16](repeating: 0, count: 40 * 30 * 4).enumerated().map {
                [12345, 54321, 7, 65535][$0.offset % 4]
            })
        let small = try Resampler.resize(flat, width: 17, height: 11, filter: .lanczos3)
        #expect(small.isHighBitDepth && small.pixel16(x: 8, y: 5) == (12345, 54321, 7, 65535))
        let directory = try TemporaryDirectory("png16")
        for alpha in [false, true] {
            let image = try CodersManager.shared.decode(try await Self.written(directory, 64, 48, alpha: alpha), options: Self.keeping)
            let wide = try #require(ResizingTransformer(width: 20, height: 15).transform(image, forKey: ""))
            let narrow = try #require(ResizingTransformer(width: 20, height: 15).transform(image.reducedToEightBits(), forKey: ""))
            #expect(wide.pixels.isHighBitDepth)
            var largest = 0
            var between = 0
            for (index, sample) in wide.pixels.samples16.enumerated() {
                largest = max(largest, abs(Int((UInt32(sample) + 128) / 257) - Int(narrow.pixels.bytes[index])))
                if sample % 257 != 0 { between += 1 }
            }
            // The 8-bit resize rounds its input to 8 bits first and, opaque, between its passes.
            #expect(largest <= 2, "alpha \(alpha)")
            #expect(between > wide.pixels.samples16.count / 2, "the extra bits carry values between 8-bit levels")
        }
    }

    @Test("blur and sharpen keep 16 bits: a flat colour stays exact, and the result rounds to the 8-bit one's within a level or two")
    func blurAndSharpen() async throws {
        let flat = Image(
            pixels: PixelBuffer(width: 30, height: 20, straightRGBA16: (0..<(30 * 20 * 4)).map { [40000, 123, 65535, 65535][$0 % 4] }))
        for transformer in [BlurTransformer(radius: 3) as any ImageTransformer, SharpeningTransformer(sigma: 1.5, amount: 2)] {
            let made = try #require(transformer.transform(flat, forKey: "")).pixels
            #expect(made.isHighBitDepth && made.pixel16(x: 15, y: 10) == (40000, 123, 65535, 65535), "\(transformer.transformerKey)")
        }
        let directory = try TemporaryDirectory("png16")
        for alpha in [false, true] {
            let image = try CodersManager.shared.decode(try await Self.written(directory, 40, 30, alpha: alpha), options: Self.keeping)
            for transformer in [BlurTransformer(radius: 2) as any ImageTransformer, SharpeningTransformer(sigma: 1, amount: 1)] {
                let wide = try #require(transformer.transform(image, forKey: "")).pixels
                let narrow = try #require(transformer.transform(image.reducedToEightBits(), forKey: "")).pixels
                #expect(wide.isHighBitDepth && !narrow.isHighBitDepth)
                // Compared premultiplied, in 8-bit levels: a nearly transparent pixel's colour is
                // as coarse at 8 bits as its alpha is small, and shows as little.
                let (samples, bytes) = (wide.samples16, narrow.bytes)
                var largest = 0.0
                for index in samples.indices where index % 4 != 3 {
                    let alpha = index - index % 4 + 3
                    let ours = Double(samples[index]) / 257 * Double(samples[alpha]) / 65535
                    let eight = Double(bytes[index]) * Double(bytes[alpha]) / 255
                    largest = max(largest, abs(ours - eight))
                }
                // The 8-bit side starts from samples rounded to 8 bits and rounds again at the end.
                #expect(largest <= 2.5, "\(transformer.transformerKey), alpha \(alpha): \(largest)")
                // Sharpening the file's noise clips many samples to 0 and 65535: count the others.
                let inside = samples.filter { $0 != 0 && $0 != 65535 }
                #expect(inside.filter { $0 % 257 != 0 }.count > inside.count / 2, "\(transformer.transformerKey)")
            }
        }
    }

    @Test("crops, quarter turns, flips, orientation and the canvas move 16-bit pixels exactly; pixelation and free turns get 8 bits")
    func exactMoves() async throws {
        let directory = try TemporaryDirectory("png16")
        let image = try CodersManager.shared.decode(try await Self.written(directory, 6, 4, alpha: true), options: Self.keeping)
        let turned = try #require(RotationTransformer(degrees: 90).transform(image, forKey: "")).pixels
        #expect(turned.isHighBitDepth && turned.width == 4 && turned.height == 6)
        // A quarter turn counter-clockwise: the top-right source pixel is the top-left one.
        #expect(turned.pixel16(x: 0, y: 0) == image.pixels.pixel16(x: 5, y: 0))
        let flipped = try #require(FlippingTransformer(horizontal: true, vertical: false).transform(image, forKey: "")).pixels
        #expect(flipped.pixel16(x: 0, y: 1) == image.pixels.pixel16(x: 5, y: 1))
        let cropped = try #require(CroppingTransformer(x: 2, y: 1, width: 3, height: 2).transform(image, forKey: "")).pixels
        #expect(cropped.isHighBitDepth && cropped.pixel16(x: 0, y: 0) == image.pixels.pixel16(x: 2, y: 1))
        var oriented = image
        oriented.orientation = .leftMirrored
        let transposed = try #require(OrientationTransformer().transform(oriented, forKey: "")).pixels
        #expect(transposed.isHighBitDepth && transposed.pixel16(x: 3, y: 5) == image.pixels.pixel16(x: 5, y: 3))
        let padded = try #require(
            CanvasTransformer(width: 8, height: 6, x: 1, y: 1, color: RGBAColor(red: 255, green: 0, blue: 0, alpha: 255)).transform(
                image, forKey: "")
        ).pixels
        #expect(padded.isHighBitDepth && padded.pixel16(x: 1, y: 1) == image.pixels.pixel16(x: 0, y: 0))
        #expect(padded.pixel16(x: 0, y: 0) == (65535, 0, 0, 65535), "the colour at 16 bits")
        let pixelated = try #require(PixelatingTransformer(blockSize: 2).transform(image, forKey: ""))
        #expect(!pixelated.isHighBitDepth)
        #expect(pixelated == PixelatingTransformer(blockSize: 2).transform(image.reducedToEightBits(), forKey: ""))
        let freely = try #require(RotationTransformer(degrees: 30).transform(image, forKey: ""))
        #expect(!freely.isHighBitDepth, "a turn that resamples is made at 8 bits")
    }

    /// Runs `tool` (libavif-bin's avifenc/avifdec) with `arguments`; its output lines.
    static func run(_ tool: String, _ arguments: [String]) async throws -> [String] {
        let process = try ChildProcess(URL(fileURLWithPath: "/usr/bin/\(tool)"), arguments)
        let status = try await process.waitForExit()
        #expect(status.status == 0, "\(tool): \(process.lines.suffix(5))")
        return process.lines
    }

    @Test(
        "a 12-bit PQ AVIF keeps its samples at 16 bits; written as AVIF it is 12-bit with its nclx, read back by avifdec to the same values"
    )
    func avif() async throws {
        let directory = try TemporaryDirectory("avif16")
        let reference = try await HDRRenderingTests.reference(in: directory)
        let kept = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: reference.pq.file)), options: Self.keeping)
        #expect(kept.pixels.isHighBitDepth && kept.sourceColor == ColorDescription(bitDepth: 12, primaries: 9, transfer: 16, matrix: 0))
        // hdr_reference.py's pq.png holds the same 12-bit codes scaled to 16 bits, as avifenc read them.
        let png = directory.url.appendingPathComponent("pq.png")
        let source = try CodersManager.shared.decode(try Data(contentsOf: png), options: Self.keeping)
        let differences = zip(kept.pixels.samples16, source.pixels.samples16).map { abs(Int($0) - Int($1)) }
        #expect(differences.max() ?? 99 <= 1, "libavif scales 12 bits to 16 as the PNG's writer did, to a level")
        var options = EncodeOptions()
        options.quality = 1
        let encoded = try CodersManager.shared.encode(kept, as: .avif, options: options)
        let file = directory.url.appendingPathComponent("ours.avif")
        try encoded.write(to: file)
        let info = try await Self.run("avifdec", ["--info", file.path]).joined(separator: "\n")
        #expect(
            info.contains("Bit Depth      : 12") && info.contains("Color Primaries: 9") && info.contains("Transfer Char. : 16"), "\(info)")
        let decoded = directory.url.appendingPathComponent("ours.png")
        _ = try await Self.run("avifdec", ["-d", "16", file.path, decoded.path])
        let read = try await Self.read(try Data(contentsOf: decoded), in: directory)
        #expect(read.bitDepth == 16)
        // Each patch's middle pixel, away from 4:2:0's shared chroma at patch edges.
        let patch = reference.patch
        var largest = 0
        for index in reference.pq.expected.indices {
            let x = index * patch + patch / 2
            for channel in 0..<3 {
                let ours = read.samples[(patch / 2 * read.width + x) * 3 + channel]
                largest = max(largest, abs(ours - Int(Self.channel(kept.pixels, x, patch / 2, channel))))
            }
        }
        // Quantizer 0 with 4:2:0 chroma: within about a 10-bit level (64 in 16 bits).
        #expect(largest <= 64, "largest difference \(largest) of 65535")
    }

    @Test("a 12-bit HEIF and a 16-bit JPEG XL keep their samples at 16 bits: those of the 16-bit PNG they were made from")
    func heifAndJXL() async throws {
        let directory = try TemporaryDirectory("heif16")
        let reference = try await HDRRenderingTests.reference(in: directory)
        let png = try CodersManager.shared.decode(
            try Data(contentsOf: directory.url.appendingPathComponent("pq.png")), options: Self.keeping)
        // hdr_reference.py: the HEIF is lossless 12-bit RGB from the same codes, widened here as
        // the PNG's writer widened them; the JPEG XL is cjxl's lossless copy of the PNG.
        for name in ["pq.heic", "pq.jxl"] {
            let kept = try CodersManager.shared.decode(
                try Data(contentsOf: directory.url.appendingPathComponent(name)), options: Self.keeping)
            #expect(kept.pixels.isHighBitDepth, "\(name)")
            #expect(kept.sourceColor?.transfer == ColorDescription.perceptualQuantizer, "\(name)")
            #expect(kept.pixels.samples16 == png.pixels.samples16, "\(name)")
            #expect(
                kept.reducedToEightBits().pixels
                    == (try CodersManager.shared.decode(try Data(contentsOf: directory.url.appendingPathComponent(name)))).pixels,
                "\(name): made 8-bit, the plain decode's tone mapping")
        }
        #expect(reference.pq.others.count == 3)
    }

    @Test(
        "16-bit pixels written as JPEG XL are 16-bit, losslessly the same samples read back by djxl; a PQ picture's encoding says PQ in BT.2100"
    )
    func jxlEncode() async throws {
        let directory = try TemporaryDirectory("jxl16")
        var options = EncodeOptions()
        options.lossless = true
        for (alpha, cicp) in [(true, [Int]()), (false, [9, 16, 0, 1])] {
            let image = try CodersManager.shared.decode(
                try await Self.written(directory, 11, 6, alpha: alpha, cicp: cicp), options: Self.keeping)
            let file = directory.url.appendingPathComponent("ours-\(alpha).jxl")
            try CodersManager.shared.encode(image, as: .jpegXL, options: options).write(to: file)
            let info = try await Self.run("jxlinfo", [file.path]).joined(separator: "\n")
            #expect(info.contains("16-bit"), "\(info)")
            if !cicp.isEmpty { #expect(info.contains("PQ") && info.contains("2100"), "\(info)") }
            let decoded = directory.url.appendingPathComponent("ours-\(alpha).png")
            _ = try await Self.run("djxl", [file.path, decoded.path, "--bits_per_sample=16"])
            let read = try await Self.read(try Data(contentsOf: decoded), in: directory)
            let channels = alpha ? 4 : 3
            let expected = (0..<6).flatMap { y in (0..<11).flatMap { x in (0..<channels).map { Int(Self.sample(x, y, $0)) } } }
            #expect(read.bitDepth == 16 && read.samples == expected, "alpha \(alpha)")
        }
    }

    @Test("a TIFF of half floats reads as float samples do: on the 0-255 scale, clipped and truncated, whether or not depth is kept")
    func halfFloatTIFF() async throws {
        let directory = try TemporaryDirectory("tiff-half")
        let path = directory.url.appendingPathComponent("half.tif")
        // high_bit_depth.py decodes its half floats with Python's own binary16 ("e") and casts them.
        struct Expected: Decodable { let expected: [UInt8] }
        let line = try await Self.python(["write-half-tiff", path.path, "12", "4"]).last ?? ""
        let expected = try JSONDecoder().decode(Expected.self, from: Data(line.utf8)).expected
        for options in [DecodeOptions(), Self.keeping] {
            let image = try CodersManager.shared.decode(try Data(contentsOf: path), options: options)
            #expect(!image.pixels.isHighBitDepth, "a float sample has no more than 8 bits here")
            let rgb = (0..<(12 * 4)).flatMap { pixel in image.pixels.bytes[pixel * 4..<pixel * 4 + 3] }
            #expect(rgb == expected)
            #expect(expected.contains(0) && expected.contains(255), "both ends clipped")
        }
    }

    @Test("a 16-bit TIFF keeps its samples, and 16-bit pixels write a 16-bit TIFF with the same ones, RGB and RGBA")
    func tiff() async throws {
        let directory = try TemporaryDirectory("tiff16")
        for alpha in [false, true] {
            let path = directory.url.appendingPathComponent("source-\(alpha).tif")
            _ = try await Self.python(["write-tiff", path.path, "9", "4", alpha ? "1" : "0"])
            let data = try Data(contentsOf: path)
            let kept = try CodersManager.shared.decode(data, options: Self.keeping)
            #expect(kept.pixels.isHighBitDepth && kept.hasAlpha == alpha)
            let expected = (0..<4).flatMap { y in
                (0..<9).flatMap { x in
                    (0..<4).map { channel in
                        channel == 3 && !alpha ? UInt16.max : Self.sample(x, y, channel)
                    }
                }
            }
            #expect(kept.pixels.samples16 == expected, "alpha \(alpha)")
            #expect(!(try CodersManager.shared.decode(data)).pixels.isHighBitDepth, "8-bit unless asked")
            let written = directory.url.appendingPathComponent("ours-\(alpha).tif")
            try CodersManager.shared.encode(kept, as: .tiff).write(to: written)
            let read = try await Self.python(["read-tiff", written.path]).last ?? ""
            let tiff = try JSONDecoder().decode(TIFFRead.self, from: Data(read.utf8))
            let channels = alpha ? 4 : 3
            #expect(tiff.bitDepth == 16 && tiff.channels == channels && tiff.extraSamples == (alpha ? [2] : nil))
            #expect(tiff.samples == (0..<4).flatMap { y in (0..<9).flatMap { x in (0..<channels).map { Int(Self.sample(x, y, $0)) } } })
        }
    }

    @Test("every page of a 16-bit TIFF is kept at 16 bits, each its own samples, charged twice; a page over the limit is refused")
    func tiffPages() async throws {
        let directory = try TemporaryDirectory("tiff16-pages")
        let path = directory.url.appendingPathComponent("pages.tif")
        _ = try await Self.python(["write-tiff", path.path, "9", "4", "1", "3"])
        let data = try Data(contentsOf: path)
        let kept = try CodersManager.shared.decode(data, options: Self.keeping)
        #expect(kept.frames.count == 3 && kept.frames.allSatisfy { $0.pixels.isHighBitDepth } && kept.hasAlpha)
        for page in 0..<3 {
            // high_bit_depth.py's page_sample: page k's samples with the bits of k * 0x1111 flipped.
            let expected = (0..<4).flatMap { y in
                (0..<9).flatMap { x in
                    (0..<4).map { channel -> UInt16 in
                        let value = Self.sample(x, y, channel) ^ UInt16(page * 0x1111)
                        return channel == 3 ? max(value, 1) : value
                    }
                }
            }
            #expect(kept.frames[page].pixels.samples16 == expected, "page \(page)")
        }
        var limited = Self.keeping
        limited.limits.maximumPixelCount = 9 * 4 * 2 * 3 - 1
        #expect(throws: WebImageError.self) { try CodersManager.shared.decode(data, options: limited) }
        limited.limits.maximumPixelCount = 9 * 4 * 2 * 3
        #expect(try CodersManager.shared.decode(data, options: limited).frames.count == 3)
        #expect(try CodersManager.shared.decode(data).frames.allSatisfy { !$0.pixels.isHighBitDepth }, "8-bit unless asked")
    }

    @Test("frames of both depths written as TIFF pages are all 8-bit: one stride for every page")
    func mixedDepthTIFF() throws {
        let wide = PixelBuffer(width: 3, height: 2, straightRGBA16: [UInt16](repeating: 0x8080, count: 24))
        let narrow = PixelBuffer(width: 3, height: 2, straightRGBA: [UInt8](repeating: 0x40, count: 24))
        let image = Image(frames: [ImageFrame(pixels: wide), ImageFrame(pixels: narrow)], hasAlpha: true)
        let decoded = try CodersManager.shared.decode(try CodersManager.shared.encode(image, as: .tiff))
        #expect(decoded.frames.count == 2 && !decoded.isHighBitDepth)
        #expect(decoded.frames[0].pixels.pixel(x: 2, y: 1) == (128, 128, 128, 128), "0x8080 rounded to 8 bits")
        #expect(decoded.frames[1].pixels.pixel(x: 2, y: 1) == (64, 64, 64, 64))
    }

    struct TIFFRead: Decodable {
        let bitDepth: Int
        let channels: Int
        let extraSamples: [Int]?
        let samples: [Int]
    }

    static func channel(_ pixels: PixelBuffer, _ x: Int, _ y: Int, _ channel: Int) -> UInt16 {
        pixels.samples16[(y * pixels.width + x) * 4 + channel]
    }

    @Test("a 16-bit thumbnail is reduced by whole factors as it is read: each pixel the average of its block, at 16 bits")
    func reducedWhileRead() async throws {
        let directory = try TemporaryDirectory("png16")
        var options = Self.keeping
        options.thumbnail = ThumbnailSize(width: 16, height: 12, preservesAspectRatio: false, resamples: false)
        let image = try CodersManager.shared.decode(try await Self.written(directory, 64, 48, alpha: false), options: options)
        #expect(image.pixels.isHighBitDepth && image.pixelWidth == 16 && image.pixelHeight == 12)
        for (x, y) in [(0, 0), (7, 5), (15, 11)] {
            for channel in 0..<3 {
                let block = (0..<4).flatMap { dy in (0..<4).map { dx in Int(Self.sample(x * 4 + dx, y * 4 + dy, channel)) } }
                #expect(Int(Self.channel(image.pixels, x, y, channel)) == (block.reduce(0, +) + 8) / 16, "(\(x), \(y)) \(channel)")
            }
        }
    }

    @Test("a 16-bit Adobe RGB PNG kept at 16 bits is converted to sRGB at 16 bits: colour-science's values within 0.2%")
    func iccConvertedAtSixteenBits() async throws {
        let directory = try TemporaryDirectory("icc16")
        let path = directory.url.appendingPathComponent("adobe-rgb-16.png").path
        let (width, height) = (23, 11)
        let lines = try await Self.python(["write-icc", path, "\(width)", "\(height)", Fixture.url("color/adobe-rgb.png").path])
        struct Expected: Decodable { let expected: [Int] }
        let expected = try JSONDecoder().decode(Expected.self, from: Data(try #require(lines.last).utf8)).expected
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let kept = try CodersManager.shared.decode(data, options: Self.keeping)
        #expect(kept.pixels.isHighBitDepth && kept.colorProfile == nil)
        #expect(!(try CodersManager.shared.decode(data)).pixels.isHighBitDepth)
        let samples = kept.pixels.samples16
        var worst = 0
        for pixel in 0..<(width * height) {
            for channel in 0..<3 { worst = max(worst, abs(Int(samples[pixel * 4 + channel]) - expected[pixel * 3 + channel])) }
            #expect(samples[pixel * 4 + 3] == 65535)
        }
        // lcms's 16-bit pipeline against colour-science's floating point: within 0.2% (measured
        // 99 of 65535, near black, where sRGB's curve is steepest). lcms's optimised 16-bit
        // transform was 3,257 off where colours leave sRGB's gamut, and the 8-bit path's table 9
        // levels (2,300).
        #expect(worst <= 131, "largest difference \(worst) of 65535")
    }

    @Test("a 16-bit grey PNG with a grey profile (gamma 1.8) kept at 16 bits: sRGB's curve of the profile's light, within 0.2%")
    func greyProfileAtSixteenBits() throws {
        // lcms makes the profile (a D50 grey of gamma 1.8); the expected values are its light,
        // Y = v^1.8, through sRGB's curve (IEC 61966-2-1): 12.92 Y below 0.0031308, else
        // 1.055 Y^(1/2.4) - 0.055.
        var white = cmsCIExyY(x: 0.3457, y: 0.3585, Y: 1)
        let curve = try #require(cmsBuildGamma(nil, 1.8))
        defer { cmsFreeToneCurve(curve) }
        let profile = try #require(cmsCreateGrayProfile(&white, curve))
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        #expect(cmsSaveProfileToMem(profile, nil, &size) != 0)
        var icc = [UInt8](repeating: 0, count: Int(size))
        #expect(cmsSaveProfileToMem(profile, &icc, &size) != 0)
        let greys = (0..<64).map { (index: Int) -> UInt16 in UInt16(index * 1040 + index * 37 % 17) }
        var file = SpecPNG(width: 8, height: 8, colorType: 0, depth: 16, samples: greys)
        file.chunks = [("iCCP", Data("grey 1.8".utf8) + Data([0, 0]) + SpecPNG.deflated(icc))]
        let image = try CodersManager.shared.decode(file.encoded(), options: Self.keeping)
        #expect(image.pixels.isHighBitDepth)
        let samples = image.pixels.samples16
        for (index, grey) in greys.enumerated() {
            let light = pow(Double(grey) / 65535, 1.8)
            let encoded = light < 0.0031308 ? 12.92 * light : 1.055 * pow(light, 1 / 2.4) - 0.055
            for channel in 0..<3 {
                #expect(abs(Int(samples[index * 4 + channel]) - Int((encoded * 65535).rounded())) <= 131, "grey \(grey) channel \(channel)")
            }
        }
    }

    @Test("the direct path (libdeflate, our unfiltering) gives libpng's 16-bit samples, whole and reduced, RGB and RGBA, PQ too")
    func directPath() async throws {
        let directory = try TemporaryDirectory("png16")
        for (alpha, cicp) in [(false, [Int]()), (true, []), (false, [9, 16, 0, 1])] {
            let data = try await Self.written(directory, 37, 21, alpha: alpha, cicp: cicp)
            #expect(PNGCodingTests.decodesDirectly(data, sampleBits: 16), "the direct path takes it")
            for thumbnail in [nil, ThumbnailSize(width: 9, height: 5, preservesAspectRatio: false, resamples: false)] {
                var options = Self.keeping
                options.thumbnail = thumbnail
                let (direct, libpng) = try data.withUnsafeBytes { bytes in
                    (
                        try PNGCoder().decodeStill(bytes, options: options),
                        try PNGCoder().decodeStill(bytes, options: options, direct: false)
                    )
                }
                #expect(
                    direct.pixels.isHighBitDepth && direct.pixels == libpng.pixels,
                    "alpha \(alpha), cICP \(cicp), \(String(describing: thumbnail))")
            }
        }
    }

    @Test("a 16-bit decode is charged twice its pixels: refused one pixel over, taken at exactly the limit")
    func limits() async throws {
        let directory = try TemporaryDirectory("png16")
        let data = try await Self.written(directory, 10, 6, alpha: false)
        var options = Self.keeping
        options.limits.maximumPixelCount = 120
        #expect(try CodersManager.shared.decode(data, options: options).pixels.isHighBitDepth)
        options.limits.maximumPixelCount = 119
        #expect(throws: WebImageError.self) { try CodersManager.shared.decode(data, options: options) }
        options.keepsHighBitDepth = false
        #expect(try CodersManager.shared.decode(data, options: options).pixelWidth == 10, "at 8 bits it fits")
    }
}
