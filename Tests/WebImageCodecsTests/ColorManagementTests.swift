import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// Colour management (issue 16): pixels converted to sRGB through Little CMS on decode, compared
/// with Pillow's `ImageCms.profileToProfile` of the same files (scripts/fixtures/make_color.py);
/// the profile kept on request and embedded by the encoders; EXIF kept and written back.
@Suite("Colour management and metadata")
struct ColorManagementTests {
    static func decode(_ name: String, _ options: DecodeOptions = DecodeOptions()) throws -> Image {
        try CodersManager.shared.decode(try Fixture.data("color/" + name), options: options)
    }

    /// Tolerances: 1 where both decode the same bytes (PNG, lossless WebP: only lcms's rounding
    /// differs), 3 for JPEG, whose IDCT in Pillow's wheel and in Debian's libjpeg-turbo can differ
    /// by 2 before the conversion.
    @Test(arguments: [
        ("p3.jpg", 3), ("p3.webp", 1), ("adobe-rgb.jpg", 3), ("adobe-rgb.png", 1), ("gamma-chrm.png", 1), ("srgb.jpg", 2),
    ])
    func convertsToSRGBLikePillow(name: String, tolerance: Int) throws {
        let ours = try Self.decode(name)
        let theirs = try Self.decode(name + ".srgb.png")
        #expect(ours.colorProfile == nil && ours.warnings.isEmpty, "\(name): \(ours.warnings)")
        let difference = largestChannelDifference(ours.pixels, theirs.pixels)
        #expect(difference <= tolerance, "\(name): max channel difference \(difference) from Pillow")
        // The conversion is not a no-op for the wide-gamut files: the kept pixels are far off.
        let kept = try Self.decode(name, DecodeOptions(keepsColorProfile: true))
        let unconverted = largestChannelDifference(kept.pixels, theirs.pixels)
        #expect(name == "srgb.jpg" ? unconverted <= tolerance : unconverted > 20, "\(name): \(unconverted) unconverted")
    }

    @Test("a kept profile is the source's, and JPEG, PNG and WebP embed it for the next decode to convert")
    func keptProfileRoundTrips() throws {
        let p3 = try Fixture.data("color/display-p3.icc")
        let kept = try Self.decode("p3.webp", DecodeOptions(keepsColorProfile: true))
        #expect(kept.colorProfile == p3)
        let reference = try Self.decode("p3.webp.srgb.png").pixels
        // JPEG at quality 100 without subsampling still moves a level or three, which the
        // conversion from the wider gamut stretches.
        for (format, tolerance) in [(ImageFormat.png, 1), (.webP, 1), (.jpeg, 8)] {
            let options = format == .webP ? EncodeOptions(lossless: true) : EncodeOptions(quality: 1, chromaSubsampling: .none)
            let encoded = try CodersManager.shared.encode(kept, as: format, options: options)
            let again = try CodersManager.shared.decode(encoded, options: DecodeOptions(keepsColorProfile: true))
            #expect(again.colorProfile == p3, "\(format) lost the profile")
            let converted = try CodersManager.shared.decode(encoded)
            #expect(largestChannelDifference(converted.pixels, reference) <= tolerance, "\(format)")
        }
        // A large profile spans several APP2 segments, in order.
        var large = kept
        large.colorProfile = p3 + Data(count: 150_000)
        let jpeg = try CodersManager.shared.encode(large, as: .jpeg)
        #expect(try CodersManager.shared.decode(jpeg, options: DecodeOptions(keepsColorProfile: true)).colorProfile == large.colorProfile)
    }

    @Test("progressive partial images and an animated coder's frames are converted as a whole decode is")
    func progressiveAndAnimatedConvert() throws {
        let data = try Fixture.data("color/p3.jpg")
        let whole = try CodersManager.shared.decode(data)
        let coder = try #require(CodersManager.shared.incrementalDecoder(for: data.prefix(64)))
        var last: Image?
        for end in stride(from: 256, through: data.count, by: 256) + [data.count] {
            if let image = coder.update(data.prefix(end)) { last = image }
        }
        #expect(last?.pixels == whole.pixels)
        let animation = try Fixture.data("color/p3-animated.webp")
        let frames = try CodersManager.shared.decode(animation).frames
        let animated = try #require(try CodersManager.shared.animatedImageProvider(for: animation))
        #expect(animated.frameCount == 2)
        for index in 0..<2 { #expect(try animated.frame(at: index) == frames[index].pixels) }
        let reference = try Self.decode("p3.webp.srgb.png").pixels
        #expect(largestChannelDifference(frames[0].pixels, reference) <= 1)
    }

    @Test("a profile lcms cannot read leaves the pixels as they are, with a warning")
    func unreadableProfile() throws {
        let image = try Self.decode("bad-profile.jpg")
        #expect(image.warnings.contains { $0.contains("colour profile") })
        #expect(image.pixels == (try Self.decode("bad-profile.jpg", DecodeOptions(keepsColorProfile: true))).pixels)
    }

    @Test("EXIF is kept on request and written back with the orientation the pixels have")
    func exifKeptWithOrientation() throws {
        let source = try Fixture.data("oriented-right.jpg")
        #expect(try CodersManager.shared.decode(source).exif == nil)
        let image = try CodersManager.shared.decode(source, options: DecodeOptions(keepsEXIF: true))
        let exif = try #require(image.exif)
        #expect(image.orientation != .up)
        for format in [ImageFormat.jpeg, .png, .webP] {
            let stored = try CodersManager.shared.decode(
                try CodersManager.shared.encode(image, as: format), options: DecodeOptions(keepsEXIF: true))
            #expect(stored.exif == exif, "\(format)")
            #expect(stored.orientation == image.orientation || format != .jpeg, "\(format)")
            let upright = try #require(OrientationTransformer().transform(image, forKey: "k"))
            let written = try CodersManager.shared.decode(
                try CodersManager.shared.encode(upright, as: format), options: DecodeOptions(keepsEXIF: true))
            #expect(written.orientation == .up && written.exif?.count == exif.count, "\(format)")
            #expect(written.pixelWidth == upright.pixelWidth)
        }
    }

    @Test("an image that is not upright and has no EXIF gets a minimal one holding its orientation")
    func orientationWithoutExif() throws {
        var image = Image(pixels: PixelBuffer(width: 4, height: 2, straightRGBA: [UInt8](repeating: 128, count: 32)))
        image.orientation = .right
        let decoded = try CodersManager.shared.decode(try CodersManager.shared.encode(image, as: .jpeg))
        #expect(decoded.orientation == .right)
        #expect(try CodersManager.shared.decode(try CodersManager.shared.encode(Image(pixels: image.pixels), as: .jpeg)).exif == nil)
    }
}
