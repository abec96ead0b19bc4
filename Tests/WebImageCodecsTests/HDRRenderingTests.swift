import Foundation
import Testing
@testable import WebImageCodecs
import WebImageTesting
import WebImageTestSupport

/// HDR sources rendered to SDR (``HDRRendering``) against colour-science's rendering of the same
/// code values, and the colour description each format's reader reports. The pictures and the
/// expected values come from hdr_reference.py (which says how each step is derived), run by the
/// tests' Python; the AVIFs are made by libavif's own `avifenc` (Debian's libavif-bin), lossless,
/// so each decoded sample is the one the reference starts from.
@Suite("HDR: PQ and HLG rendered to SDR, colour descriptions")
struct HDRRenderingTests {
    struct Reference: Decodable {
        struct Picture: Decodable {
            let file: String
            /// The same patches as a PNG with cICP, a HEIF and a JPEG XL.
            let others: [String]
            let expected: [[Int]]
            let asSRGB: [[Int]]
        }
        let taggedPNG: String
        let pq: Picture
        let hlg: Picture
        let patch: Int
    }

    static func reference(in directory: TemporaryDirectory) async throws -> Reference {
        let script = try #require(Bundle.module.url(forResource: "hdr_reference", withExtension: "py"))
        let python = TestPython.command
        let process = try ChildProcess(python.executable, python.arguments + [script.path, directory.url.path])
        let status = try await process.waitForExit()
        #expect(
            status.status == 0,
            "hdr_reference.py failed (colour-science in \(python.executable.path)? avifenc from libavif-bin?): \(process.lines.suffix(5))")
        let output = try #require(process.lines.last)
        return try JSONDecoder().decode(Reference.self, from: Data(output.utf8))
    }

    /// The largest difference, in 8-bit levels, between each patch's decoded pixel and the
    /// reference, and the reference white patch's level.
    static func compare(_ picture: Reference.Picture, file: String? = nil, patch: Int) throws -> (largest: Int, pixels: [[Int]]) {
        let image = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: file ?? picture.file)))
        #expect(image.pixelWidth == patch * picture.expected.count)
        var largest = 0
        var pixels: [[Int]] = []
        for index in picture.expected.indices {
            let offset = image.pixels.bytesPerRow + (index * patch + 1) * 4
            let pixel = (0..<3).map { Int(image.pixels.bytes[offset + $0]) }
            pixels.append(pixel)
            largest = max(largest, zip(pixel, picture.expected[index]).map { abs($0 - $1) }.max() ?? 0)
        }
        return (largest, pixels)
    }

    @Test("a 12-bit PQ and an HLG AVIF render as colour-science does, to 1 level; not as their code values shown as sRGB")
    func rendersAsTheReference() async throws {
        let directory = try TemporaryDirectory("hdr")
        let reference = try await Self.reference(in: directory)
        for (name, picture) in [("pq", reference.pq), ("hlg", reference.hlg)] {
            let image = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: picture.file)))
            let transfer = name == "pq" ? ColorDescription.perceptualQuantizer : ColorDescription.hybridLogGamma
            #expect(image.sourceColor == ColorDescription(bitDepth: 12, primaries: 9, transfer: transfer, matrix: 0))
            #expect(image.sourceColor?.isHDR == true)
            let (largest, pixels) = try Self.compare(picture, patch: reference.patch)
            // Measured: 0 levels for PQ's twelve patches and HLG's seven (the tables are fine
            // enough that Float arithmetic lands on the same level as colour-science's doubles).
            #expect(largest <= 1, "\(name): \(pixels) against \(picture.expected)")
            // The code values shown as sRGB, as the 8-bit conversion did: BT.2408's reference
            // white (203 cd/m², PQ patch 5; HLG 0.75, patch 3) came out 148 and 191; rendered,
            // it is 229 in both.
            let white = name == "pq" ? 5 : 3
            #expect(pixels[white][0] - picture.asSRGB[white][0] > 35, "\(name): \(pixels[white]) against \(picture.asSRGB[white])")
        }
    }

    @Test("the curve is the identity below its knee and never brighter than SDR white; a dim picture is not compressed")
    func curve() {
        let curve = ToneCurve(sourcePeak: 1000, targetPeak: 203)
        #expect(curve.map(10) == 10 && curve.map(50) == 50)
        var previous: Float = 0
        for nits in stride(from: Float(1), through: 1000, by: 1) {
            let mapped = curve.map(nits)
            #expect(mapped >= previous && mapped <= 203.01, "\(nits) -> \(mapped)")
            previous = mapped
        }
        #expect(abs(curve.map(1000) - 203) < 0.01)
        let dim = ToneCurve(sourcePeak: 203, targetPeak: 203)
        #expect(dim.map(150) == 150)
    }

    @Test("the same PQ and HLG patches as a PNG with cICP, a 12-bit HEIF and a 16-bit JPEG XL render as colour-science does, to 1 level")
    func otherFormatsRenderAsTheReference() async throws {
        let directory = try TemporaryDirectory("hdr-formats")
        let reference = try await Self.reference(in: directory)
        for (name, picture) in [("pq", reference.pq), ("hlg", reference.hlg)] {
            let transfer = name == "pq" ? ColorDescription.perceptualQuantizer : ColorDescription.hybridLogGamma
            #expect(picture.others.count == 3)
            for (file, bits) in zip(picture.others, [16, 12, 16]) {
                let image = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: file)))
                #expect(
                    image.sourceColor?.bitDepth == bits && image.sourceColor?.transfer == transfer,
                    "\(file): \(String(describing: image.sourceColor))")
                #expect(image.sourceColor?.primaries == 9, "\(file)")
                let (largest, pixels) = try Self.compare(picture, file: file, patch: reference.patch)
                // The 16-bit PNG and JPEG XL hold each 12-bit code scaled to 16 bits, the HEIF
                // the 12-bit code itself: the same light to within 1/65535 of the signal.
                #expect(largest <= 1, "\(file): \(pixels) against \(picture.expected)")
                // Charged as the AVIF is: three times the pixels (16-bit samples beside the result).
                let width = reference.patch * picture.expected.count
                let charged = 3 * width * reference.patch
                let data = try Data(contentsOf: URL(fileURLWithPath: file))
                let refused = #expect(throws: WebImageError.self) {
                    try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: charged - 1)))
                }
                #expect(
                    refused?.code == .tooLarge && refused?.message?.contains("16 bits") == true, "\(file): \(String(describing: refused))")
                let allowed = try CodersManager.shared.decode(
                    data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: charged)))
                #expect(allowed.pixelWidth == width)
            }
        }
    }

    @Test("an HDR decode is charged three times its pixels against the limits: it holds 16-bit samples beside the result")
    func limits() throws {
        // avif/pq-12-bit.avif is hdr_reference.py's pq.avif: 48x4, 192 pixels, 576 charged.
        let data = try Fixture.data("avif/pq-12-bit.avif")
        let refused = #expect(throws: WebImageError.self) {
            try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 575)))
        }
        #expect(refused?.code == .tooLarge && refused?.message?.contains("16 bits") == true, "\(String(describing: refused))")
        let decoded = try CodersManager.shared.decode(data, options: DecodeOptions(limits: DecodeLimits(maximumPixelCount: 576)))
        #expect(decoded.pixelWidth == 48 && decoded.pixelHeight == 4)
    }

    @Test("PNG reports its bit depth and cICP, JPEG its precision and an Ultra HDR gain map's XMP")
    func descriptions() async throws {
        let directory = try TemporaryDirectory("hdr-png")
        let reference = try await Self.reference(in: directory)
        let tagged = try CodersManager.shared.decode(try Data(contentsOf: URL(fileURLWithPath: reference.taggedPNG)))
        #expect(tagged.sourceColor == ColorDescription(bitDepth: 16, primaries: 9, transfer: 16, matrix: 0))
        let plain = try CodersManager.shared.decode(
            try CodersManager.shared.encode(
                Image(pixels: PixelBuffer(width: 2, height: 2, straightRGBA: [UInt8](repeating: 200, count: 16))), as: .png))
        #expect(plain.sourceColor == ColorDescription(bitDepth: 8))
        let jpeg = try CodersManager.shared.encode(
            Image(pixels: PixelBuffer(width: 8, height: 8, straightRGBA: [UInt8](repeating: 120, count: 256))), as: .jpeg)
        #expect(try CodersManager.shared.decode(jpeg).sourceColor == ColorDescription(bitDepth: 8))
        // An Ultra HDR primary image's XMP (Android's Ultra HDR format, Adobe's gain map
        // namespace), placed after SOI: the gain map is reported, the SDR base decoded.
        let decoded = try CodersManager.shared.decode(UltraHDRFile.make(jpeg, gainMapXMP: nil))
        #expect(decoded.sourceColor == ColorDescription(bitDepth: 8, hasGainMap: true))
        #expect(decoded.pixels == (try CodersManager.shared.decode(jpeg)).pixels)
        // With the gain map image appended, its XMP as libultrahdr writes it: its values are reported.
        let withValues = try CodersManager.shared.decode(UltraHDRFile.make(jpeg))
        let expected = GainMapMetadata(
            gainMapMin: [0], gainMapMax: [2.32193], gamma: [1], offsetSDR: [0], offsetHDR: [0], hdrCapacityMin: 0, hdrCapacityMax: 2.32193)
        #expect(withValues.sourceColor == ColorDescription(bitDepth: 8, hasGainMap: true, gainMap: expected))
        #expect(withValues.pixels == decoded.pixels, "the SDR base is what is decoded")
    }

    @Test("gain map XMP: attributes or elements, one value or three, the defaults libultrahdr applies, required values, bad ones")
    func gainMapValues() {
        // Defaults (lib/src/jpegrutils.cpp, getGainmapMetadata): GainMapMin 0 (a boost of 1),
        // Gamma 1, OffsetSDR and OffsetHDR 1/64, HDRCapacityMin 0, BaseRenditionIsHDR false.
        let minimal = GainMapXMP.metadata(in: #"<d hdrgm:Version="1.0" hdrgm:GainMapMax="3" hdrgm:HDRCapacityMax='2.5'/>"#)
        #expect(minimal == GainMapMetadata(gainMapMax: [3], hdrCapacityMax: 2.5))
        #expect(minimal?.offsetSDR == [0.015625] && minimal?.gamma == [1] && minimal?.baseRenditionIsHDR == false)
        let perChannel = GainMapXMP.metadata(
            in: """
                <rdf:Description hdrgm:HDRCapacityMax="1.5"><hdrgm:GainMapMax><rdf:Seq><rdf:li>1.1</rdf:li><rdf:li>1.2</rdf:li>                <rdf:li>1.3</rdf:li></rdf:Seq></hdrgm:GainMapMax><hdrgm:Gamma>0.8</hdrgm:Gamma>                <hdrgm:BaseRenditionIsHDR>True</hdrgm:BaseRenditionIsHDR></rdf:Description>
                """)
        #expect(perChannel == GainMapMetadata(gainMapMax: [1.1, 1.2, 1.3], gamma: [0.8], hdrCapacityMax: 1.5, baseRenditionIsHDR: true))
        #expect(GainMapXMP.metadata(in: #"<d hdrgm:GainMapMax="3"/>"#) == nil, "HDRCapacityMax is required")
        #expect(GainMapXMP.metadata(in: #"<d hdrgm:HDRCapacityMax="3"/>"#) == nil, "GainMapMax is required")
        #expect(GainMapXMP.metadata(in: #"<d hdrgm:GainMapMax="three" hdrgm:HDRCapacityMax="3"/>"#) == nil, "not a number")
        #expect(GainMapXMP.metadata(in: #"<d hdrgm:GainMapMax="3" hdrgm:HDRCapacityMax="3" hdrgm:Gamma="x"/>"#) == nil)
        #expect(GainMapXMP.metadata(in: #"<d hdrgm:GainMapMax="3" hdrgm:HDRCapacityMax="3" hdrgm:BaseRenditionIsHDR="maybe"/>"#) == nil)
    }

    @Test("an Ultra HDR JPEG libultrahdr 1.4 wrote, with ISO 21496-1 metadata and no hdrgm XMP: its values, as the hdrgm names say them")
    func isoGainMap() throws {
        // gain-map/libultrahdr-iso.jpg: imagecodecs 2026.3.6's ultrahdr_encode (libultrahdr 1.4.0)
        // of a linear half-float ramp, defaults otherwise. Its gain map image's APP2 holds
        // versions 0 and 0, flags 0x40 (one channel, the base's colour space), base headroom 0/1,
        // alternate headroom 5895489/1048576, then min 0/1, max 5895489/1048576, gamma 1/1 and
        // offsets 0/1: log2(10000 / 203) = 5.6224, libultrahdr's peak for linear input over
        // BT.2408's reference white.
        let file = try CodersManager.shared.decode(try Fixture.data("gain-map/libultrahdr-iso.jpg"))
        let headroom = 5_895_489.0 / 1_048_576
        #expect(abs(headroom - log2(10_000.0 / 203)) < 1e-5)
        let expected = GainMapMetadata(
            gainMapMin: [0], gainMapMax: [headroom], gamma: [1], offsetSDR: [0], offsetHDR: [0], hdrCapacityMin: 0, hdrCapacityMax: headroom
        )
        #expect(file.sourceColor == ColorDescription(bitDepth: 8, hasGainMap: true, gainMap: expected))
        #expect(file.pixelWidth == 64 && file.pixelHeight == 48, "the SDR base is what is decoded")
    }

    @Test("ISO 21496-1 payloads: three channels, an HDR base turned into hdrgm's direction, versions, cut short, zero denominators")
    func isoGainMapValues() {
        func fraction(_ numerator: Int32, _ denominator: UInt32) -> [UInt8] {
            [UInt32(bitPattern: numerator), denominator].flatMap { value in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        }
        let versions: [UInt8] = [0, 0, 0, 0]
        // Per channel: min, max, gamma, base offset, alternate offset (ISO 21496-1's order).
        let channel = { (index: Int32) in
            fraction(-index, 4) + fraction(8 + index, 4) + fraction(1, 1) + fraction(1, 64) + fraction(2, 64)
        }
        let three = versions + [0xC0] + fraction(0, 1) + fraction(3, 1) + channel(0) + channel(1) + channel(2)
        #expect(
            GainMapISO.metadata(payload: three)
                == GainMapMetadata(
                    gainMapMin: [0, -0.25, -0.5], gainMapMax: [2, 2.25, 2.5], gamma: [1, 1, 1], offsetSDR: [1.0 / 64, 1.0 / 64, 1.0 / 64],
                    offsetHDR: [2.0 / 64, 2.0 / 64, 2.0 / 64], hdrCapacityMin: 0, hdrCapacityMax: 3))
        // An HDR base (its headroom the larger): the gain runs HDR to SDR, so hdrgm's minimum is
        // the negated maximum, and the base's offset is the HDR one.
        let hdrBase = versions + [0x40] + fraction(3, 1) + fraction(0, 1) + channel(1)
        #expect(
            GainMapISO.metadata(payload: hdrBase)
                == GainMapMetadata(
                    gainMapMin: [-2.25], gainMapMax: [0.25], gamma: [1], offsetSDR: [2.0 / 64], offsetHDR: [1.0 / 64], hdrCapacityMin: 0,
                    hdrCapacityMax: 3, baseRenditionIsHDR: true))
        #expect(
            GainMapISO.metadata(payload: [0, 1, 0, 0] + Array(three.dropFirst(4))) == nil, "a minimum version this reader does not know")
        #expect(GainMapISO.metadata(payload: Array(three.dropLast())) == nil, "cut short")
        #expect(GainMapISO.metadata(payload: versions + [0x40] + fraction(0, 0) + fraction(3, 1) + channel(0)) == nil, "a zero denominator")
    }
}
