import CLCMS2
import Dispatch
import Foundation

extension Image {
    /// The image with its pixels converted from ``colorProfile`` to sRGB and the profile
    /// dropped: what decoding does by default, for an image decoded with
    /// ``DecodeOptions/keepsColorProfile``. An image without a profile is returned as it is.
    public func convertingToSRGB() -> Image {
        guard let colorProfile else { return self }
        var image = self
        image.colorProfile = nil
        ColorManagement.convertToSRGB(&image, from: .icc(colorProfile))
        return image
    }
}

/// Colour conversion to sRGB through Little CMS (the library Pillow's `ImageCms` and libvips
/// use), with Pillow's defaults: perceptual intent, lcms2's precalculated 8-bit transform; 16-bit
/// pixels (``DecodeOptions/keepsHighBitDepth``) through lcms2's 16-bit transform, as libvips
/// converts a 16-bit image, so that they stay 16 bits. Alpha is copied. Transforms are made once
/// per profile and kept (a few, least recently made first out); a profile that describes sRGB itself (its description starts with "sRGB") converts
/// nothing. A profile lcms cannot read, or one for another colour model than the pixels' (a
/// CMYK profile: CMYK JPEGs are converted to RGB without it), leaves the pixels as they are
/// with a warning, as browsers show such files.
enum ColorManagement {
    /// Converts every frame of `image` from `colorSpace` to sRGB.
    static func convertToSRGB(_ image: inout Image, from colorSpace: SourceMetadata.ColorSpace) {
        guard let profile = profileData(colorSpace) else {
            image.warnings.append("the colour profile is unreadable; the pixels are shown as sRGB")
            return
        }
        let conversion = cache.conversion(for: profile)
        switch conversion {
        case .identity: return
        case .unusable(let reason):
            image.warnings.append("the colour profile is not used (\(reason)); the pixels are shown as sRGB")
        case .transform(let transform):
            image.frames = image.frames.map { frame in
                var frame = frame
                frame.pixels = transform.apply(to: frame.pixels)
                return frame
            }
        }
    }

    /// Whether converting from `colorSpace` to sRGB changes nothing (a profile that describes
    /// sRGB itself).
    static func convertsNothing(from colorSpace: SourceMetadata.ColorSpace) -> Bool {
        guard let profile = profileData(colorSpace), case .identity = cache.conversion(for: profile) else { return false }
        return true
    }

    /// Why `profile` cannot describe RGB pixels, or nil when it can: lcms reads it, it is an RGB
    /// profile, and it converts to sRGB. An encoder that converts through the profile itself
    /// (libjxl's lossy XYB) aborts the process on one it cannot use.
    static func rgbProfileProblem(_ profile: Data) -> String? {
        if case .unusable(let reason) = cache.conversion(for: profile) { return reason }
        let source = profile.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }
        guard let source else { return "lcms cannot read it" }
        defer { cmsCloseProfile(source) }
        return cmsGetColorSpace(source) == cmsSigRgbData ? nil : "not an RGB profile"
    }

    /// The ICC bytes of a colour space: the embedded profile, or one lcms makes from a PNG's
    /// `gAMA` and `cHRM` chunks (sRGB's primaries and D65 white when there is no `cHRM`).
    static func profileData(_ colorSpace: SourceMetadata.ColorSpace) -> Data? {
        switch colorSpace {
        case .icc(let data): return data
        case .pngChunks(let gamma, let chromaticities):
            let xy = chromaticities ?? [0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06]
            var white = cmsCIExyY(x: xy[0], y: xy[1], Y: 1)
            var primaries = cmsCIExyYTRIPLE(
                Red: cmsCIExyY(x: xy[2], y: xy[3], Y: 1), Green: cmsCIExyY(x: xy[4], y: xy[5], Y: 1),
                Blue: cmsCIExyY(x: xy[6], y: xy[7], Y: 1))
            guard let curve = cmsBuildGamma(nil, 1 / gamma) else { return nil }
            defer { cmsFreeToneCurve(curve) }
            var curves: [OpaquePointer?] = [curve, curve, curve]
            guard let profile = cmsCreateRGBProfile(&white, &primaries, &curves) else { return nil }
            defer { cmsCloseProfile(profile) }
            var size: cmsUInt32Number = 0
            guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
            var data = Data(count: Int(size))
            let saved = data.withUnsafeMutableBytes { cmsSaveProfileToMem(profile, $0.baseAddress, &size) }
            return saved != 0 ? data : nil
        }
    }

    /// What a profile asks of the pixels.
    enum Conversion: Sendable {
        case identity
        case transform(Transform)
        case unusable(String)
    }

    static let cache = ConversionCache()

    /// The conversions made so far, by profile bytes.
    ///
    /// Entries are small classes with plain stored references: a `Data` or a multi-payload enum
    /// kept in a long-lived static is stored with tag bits in its pointer, which LeakSanitizer
    /// does not follow, so it reported every cached profile as leaked (found by FuzzJPEG).
    final class ConversionCache: Sendable {
        static let capacity = 16

        private final class Entry: Sendable {
            let profile: [UInt8]
            let transform: Transform?
            let unusableReason: String?

            init(profile: [UInt8], conversion: Conversion) {
                self.profile = profile
                switch conversion {
                case .identity: (transform, unusableReason) = (nil, nil)
                case .transform(let made): (transform, unusableReason) = (made, nil)
                case .unusable(let reason): (transform, unusableReason) = (nil, reason)
                }
            }

            var conversion: Conversion {
                if let transform { return .transform(transform) }
                return unusableReason.map(Conversion.unusable) ?? .identity
            }
        }

        private let entries = Locked<[Entry]>([])

        func conversion(for profile: Data) -> Conversion {
            let bytes = [UInt8](profile)
            if let found = entries.withLock({ $0.first { $0.profile == bytes } }) { return found.conversion }
            let made = Transform.make(from: profile)
            entries.withLock { entries in
                if entries.count >= Self.capacity { entries.removeFirst() }
                entries.append(Entry(profile: bytes, conversion: made))
            }
            return made
        }
    }

    /// An lcms transform to sRGB: RGBA to RGBA for an RGB profile, or for a grey profile a table
    /// of the 256 grey levels' sRGB colours; and for 16-bit pixels, RGBA to RGBA or grey to RGB at
    /// 16 bits.
    ///
    /// `@unchecked Sendable`: the handles are made once, never changed, and freed in deinit;
    /// `cmsDoTransform` on a transform made with `cmsFLAGS_NOCACHE` keeps no state between
    /// calls, so threads may share it.
    final class Transform: @unchecked Sendable {
        private let handle: cmsHTRANSFORM?
        private let greyLevels: [SIMD4<UInt8>]?
        /// 16-bit RGBA to RGBA (an RGB profile), or 16-bit grey to RGB (a grey profile: the one
        /// with `greyLevels`).
        private let wideHandle: cmsHTRANSFORM

        private init(handle: cmsHTRANSFORM?, greyLevels: [SIMD4<UInt8>]?, wideHandle: cmsHTRANSFORM) {
            self.handle = handle
            self.greyLevels = greyLevels
            self.wideHandle = wideHandle
        }

        deinit {
            if let handle { cmsDeleteTransform(handle) }
            cmsDeleteTransform(wideHandle)
        }

        static func make(from profile: Data) -> Conversion {
            let source = profile.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }
            guard let source else { return .unusable("lcms cannot read it") }
            defer { cmsCloseProfile(source) }
            if describesSRGB(source) { return .identity }
            guard let sRGB = cmsCreate_sRGBProfile() else { return .unusable("lcms cannot make sRGB") }
            defer { cmsCloseProfile(sRGB) }
            let (intent, flags) = (cmsUInt32Number(INTENT_PERCEPTUAL), cmsUInt32Number(cmsFLAGS_NOCACHE | cmsFLAGS_COPY_ALPHA))
            // At 16 bits the whole pipeline per pixel: lcms's optimisation resamples it into a grid
            // whose interpolation, where colours leave sRGB's gamut and are clipped, was up to 5% off.
            let exact = flags | cmsUInt32Number(cmsFLAGS_NOOPTIMIZE)
            switch cmsGetColorSpace(source) {
            case cmsSigRgbData:
                guard let handle = cmsCreateTransform(source, cwi_lcms_type_rgba_8, sRGB, cwi_lcms_type_rgba_8, intent, flags) else {
                    return .unusable("lcms cannot convert it to sRGB")
                }
                guard let wide = cmsCreateTransform(source, cwi_lcms_type_rgba_16, sRGB, cwi_lcms_type_rgba_16, intent, exact) else {
                    cmsDeleteTransform(handle)
                    return .unusable("lcms cannot convert it to sRGB")
                }
                return .transform(Transform(handle: handle, greyLevels: nil, wideHandle: wide))
            case cmsSigGrayData:
                let (plain, exactGrey) = (cmsUInt32Number(cmsFLAGS_NOCACHE), cmsUInt32Number(cmsFLAGS_NOCACHE | cmsFLAGS_NOOPTIMIZE))
                guard let levels = cmsCreateTransform(source, cwi_lcms_type_gray_8, sRGB, cwi_lcms_type_rgb_8, intent, plain) else {
                    return .unusable("lcms cannot convert it to sRGB")
                }
                defer { cmsDeleteTransform(levels) }
                guard let wide = cmsCreateTransform(source, cwi_lcms_type_gray_16, sRGB, cwi_lcms_type_rgb_16, intent, exactGrey) else {
                    return .unusable("lcms cannot convert it to sRGB")
                }
                var colours = [UInt8](repeating: 0, count: 256 * 3)
                cmsDoTransform(levels, [UInt8](0...255), &colours, 256)
                let table = (0..<256).map { SIMD4(colours[$0 * 3], colours[$0 * 3 + 1], colours[$0 * 3 + 2], 0) }
                return .transform(Transform(handle: nil, greyLevels: table, wideHandle: wide))
            default:
                return .unusable("a profile for another colour model than RGB or grey")
            }
        }

        private static func describesSRGB(_ profile: cmsHPROFILE) -> Bool {
            var text = [CChar](repeating: 0, count: 64)
            guard cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", &text, cmsUInt32Number(text.count)) > 0 else {
                return false
            }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).hasPrefix("sRGB")
        }

        /// The pixels in sRGB at their own depth, alpha unchanged. Large images are converted in
        /// bands on every core.
        func apply(to pixels: PixelBuffer) -> PixelBuffer {
            var bytes = pixels.bytes
            let (count, pixelBytes, wide) = (pixels.width * pixels.height, pixels.bytesPerPixel, pixels.isHighBitDepth)
            bytes.withUnsafeMutableBytes { buffer in
                // An address, not a pointer, crosses into the bands: each converts its own range.
                let base = Int(bitPattern: buffer.baseAddress!)
                let bands = count >= ParallelRows.minimumPixelsToSplit ? ProcessInfo.processInfo.activeProcessorCount * 2 : 1
                DispatchQueue.concurrentPerform(iterations: bands) { band in
                    let start = count * band / bands
                    let end = count * (band + 1) / bands
                    let pixels = UnsafeMutableRawPointer(bitPattern: base + start * pixelBytes)!
                    if wide { convertWide(pixels, pixelCount: end - start) } else { convert(pixels, pixelCount: end - start) }
                }
            }
            return PixelBuffer(width: pixels.width, height: pixels.height, bitsPerSample: pixels.bitsPerSample, bytes: bytes)
        }

        private func convert(_ pixels: UnsafeMutableRawPointer, pixelCount: Int) {
            if let handle {
                cmsDoTransform(handle, pixels, pixels, cmsUInt32Number(pixelCount))
            } else if let greyLevels {
                for index in 0..<pixelCount {
                    let pixel = pixels + index * 4
                    var colour = greyLevels[Int(pixel.load(as: UInt8.self))]
                    colour[3] = pixel.load(fromByteOffset: 3, as: UInt8.self)
                    pixel.storeBytes(of: colour, as: SIMD4<UInt8>.self)
                }
            }
        }

        /// 16-bit RGBA in place; through a grey profile, each pixel's grey (its red sample) to RGB.
        private func convertWide(_ pixels: UnsafeMutableRawPointer, pixelCount: Int) {
            guard greyLevels != nil else {
                cmsDoTransform(wideHandle, pixels, pixels, cmsUInt32Number(pixelCount))
                return
            }
            let samples = pixels.assumingMemoryBound(to: UInt16.self)
            let greys = (0..<pixelCount).map { samples[$0 * 4] }
            var colours = [UInt16](repeating: 0, count: pixelCount * 3)
            cmsDoTransform(wideHandle, greys, &colours, cmsUInt32Number(pixelCount))
            for index in 0..<pixelCount {
                for channel in 0..<3 { samples[index * 4 + channel] = colours[index * 3 + channel] }
            }
        }
    }
}
