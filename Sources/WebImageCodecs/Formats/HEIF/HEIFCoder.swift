package import Foundation
import CHEIF

/// HEIC and HEIF through libheif (Debian's 1.15: libde265 decodes HEVC, x265 encodes): the primary
/// image (its 10 or 12 bits kept as 16-bit pixels with ``DecodeOptions/keepsHighBitDepth``), grid
/// (tiled) images, alpha, the `irot`/`imir` transforms applied by libheif so the pixels
/// are upright, the embedded ICC profile through the colour management. For a thumbnail, the
/// file's own thumbnail is used when it is at least the size asked for (iPhone photos carry a
/// 320 px one), so the full image is never decoded.
///
/// Encoding HEIC goes through libheif's HEVC encoder (x265 in Debian's libheif) when it has one
/// (``canEncode(to:)`` says): 4:2:0 at ``EncodeOptions/quality`` (libheif's 0 to 100 scale), alpha,
/// the colour profile; always lossy, and an animation keeps its first frame (libheif 1.15 writes
/// no image sequences).
package struct HEIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .heic || format == .heif }

    public func canEncode(to format: ImageFormat) -> Bool { format == .heic && Self.hasEncoder }

    /// Whether libheif has an HEVC encoder (a plugin, x265 in Debian).
    static let hasEncoder = heif_have_encoder_for_format(heif_compression_HEVC) != 0

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        try data.withTypedBytes { bytes throws(WebImageError) -> Image in
            let context = try HEIFContext(bytes.bindMemory(to: UInt8.self))
            let primary = try context.primaryImage()
            defer { heif_image_handle_release(primary) }
            let width = Int(heif_image_handle_get_width(primary))
            let height = Int(heif_image_handle_get_height(primary))
            try options.limits.checkDeclared(width: width, height: height)
            // A grid states its own output size, which libheif allocates whatever the container's
            // size (ispe) says: a fuzzed 2 KB file made it fill 13568x8192 for a 48x32 image. No
            // image of this file may now be larger on a side than the primary image.
            context.limitSides(to: max(width, height) + 1)
            try Self.checkCodedPictures(in: bytes.bindMemory(to: UInt8.self), limits: options.limits)
            let chosen = Self.thumbnail(of: primary, atLeast: options.thumbnail) ?? primary
            defer { if chosen != primary { heif_image_handle_release(chosen) } }
            let chosenWidth = Int(heif_image_handle_get_width(chosen))
            let chosenHeight = Int(heif_image_handle_get_height(chosen))
            try options.limits.check(width: chosenWidth, height: chosenHeight, inputSize: bytes.count)
            let hasAlpha = heif_image_handle_has_alpha_channel(chosen) != 0
            let format = ImageFormat(sniffing: bytes) ?? .heic
            let description = Self.colorDescription(of: chosen)
            // A 10- or 12-bit image kept so (DecodeOptions.keepsHighBitDepth), or a PQ or HLG one
            // (its `nclx` says so, and no ICC profile overrides it) tone-mapped from 16 bits.
            let keeps = options.keepsHighBitDepth && description.bitDepth > 8
            guard keeps || (description.isHDR && heif_image_handle_get_raw_color_profile_size(chosen) == 0) else {
                return Image(pixels: try Self.pixels(of: chosen), scale: options.scale, sourceFormat: format, hasAlpha: hasAlpha)
            }
            if keeps {
                try options.limits.checkHighBitDepth(width: chosenWidth, height: chosenHeight)
            } else {
                try HDRRendering.checkWorkingMemory(width: chosenWidth, height: chosenHeight, limits: options.limits)
            }
            let wide = try Self.sixteenBitPixels(of: chosen)
            var image = Image(
                pixels: keeps ? wide : wide.reducedToEightBits(describedBy: description), scale: options.scale, sourceFormat: format,
                hasAlpha: hasAlpha)
            // Only a description kept here needs the gain map: CodersManager reads the file's own
            // (containerColor) when a decode gives none.
            image.sourceColor = description.noting(GainMapHEIF.find(in: UnsafeRawBufferPointer(bytes)))
            return image
        }
    }

    /// The image decoded at its bit depth as 16-bit RGBA, widened to 0...65535.
    private static func sixteenBitPixels(of handle: OpaquePointer) throws(WebImageError) -> PixelBuffer {
        try withDecodedPlane(handle, chroma: heif_chroma_interleaved_RRGGBBAA_LE, bytesPerPixel: 8) {
            (plane, bits, width, height, stride) throws(WebImageError) in
            guard (8...16).contains(bits) else { throw WebImageError(.decodeFailed, "HEIF: \(bits)-bit samples") }
            let maximum = UInt32(1 << bits - 1)
            let samples = [UInt16](unsafeUninitializedCapacity: width * height * 4) { target, initialized in
                for y in 0..<height {
                    let row = UnsafeRawPointer(plane + y * stride).assumingMemoryBound(to: UInt16.self)
                    for index in 0..<(width * 4) {
                        let value = min(UInt32(UInt16(littleEndian: row[index])), maximum)
                        target[y * width * 4 + index] = UInt16((value * 65535 + maximum / 2) / maximum)
                    }
                }
                initialized = width * height * 4
            }
            return PixelBuffer(width: width, height: height, straightRGBA16: samples)
        }
    }

    /// Calls `body` with the image decoded by libheif as interleaved `chroma` (its transforms
    /// applied): the plane, its bits per sample, width, height and row stride in bytes (at
    /// least `bytesPerPixel` a pixel); the decoded image is released after.
    private static func withDecodedPlane<Result>(
        _ handle: OpaquePointer, chroma: heif_chroma, bytesPerPixel: Int,
        _ body: (UnsafePointer<UInt8>, Int, Int, Int, Int) throws(WebImageError) -> Result
    ) throws(WebImageError) -> Result {
        var decoded: OpaquePointer?
        let error = heif_decode_image(handle, &decoded, heif_colorspace_RGB, chroma, nil)
        guard error.code == heif_error_Ok, let decoded else { throw failure(error, "decode") }
        defer { heif_image_release(decoded) }
        let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
        let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
        var stride: Int32 = 0
        guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
            Int(stride) >= width * bytesPerPixel
        else {
            throw WebImageError(.decodeFailed, "HEIF: no pixels")
        }
        let bits = Int(heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved))
        return try body(plane, bits, width, height, Int(stride))
    }

    /// Refuses a file whose HEVC parameter sets declare a picture over the declared-size cap, or
    /// more pixels together than four times the pixel limit (a primary image, its alpha and its
    /// thumbnails fit easily) and 65,536 more (encoders pad small pictures to 64-pixel blocks:
    /// heif-enc's 48x32 image and 16 px thumbnail declare 64x64 each), before libde265 decodes
    /// any of them (``HEVCParameterSets``).
    static func checkCodedPictures(in bytes: UnsafeBufferPointer<UInt8>, limits: DecodeLimits) throws(WebImageError) {
        var total = 0
        for size in HEVCParameterSets.pictureSizes(in: bytes) {
            try limits.checkDeclared(width: size.width, height: size.height)
            total += size.width * size.height
        }
        guard total <= 4 * limits.maximumPixelCount + 65_536 else {
            throw WebImageError(
                .tooLarge, "HEIF: its HEVC streams declare \(total) pixels, over four times the \(limits.maximumPixelCount)-pixel limit")
        }
    }

    /// The smallest embedded thumbnail at least `size`, if there is one.
    private static func thumbnail(of primary: OpaquePointer, atLeast size: ThumbnailSize?) -> OpaquePointer? {
        guard let size, size.width > 0, size.height > 0 else { return nil }
        let count = Int(heif_image_handle_get_number_of_thumbnails(primary))
        guard count > 0 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        _ = heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, Int32(count))
        var best: (handle: OpaquePointer, pixels: Int)?
        for id in ids {
            var handle: OpaquePointer?
            guard heif_image_handle_get_thumbnail(primary, id, &handle).code == heif_error_Ok, let handle else { continue }
            let width = Int(heif_image_handle_get_width(handle))
            let height = Int(heif_image_handle_get_height(handle))
            let fits = width >= size.width && height >= size.height
            if fits, best == nil || width * height < best!.pixels {
                if let previous = best { heif_image_handle_release(previous.handle) }
                best = (handle, width * height)
            } else {
                heif_image_handle_release(handle)
            }
        }
        return best?.handle
    }

    /// The image's pixels, decoded to interleaved 8-bit RGBA with its transforms applied (libheif
    /// gives alpha 255 to an image without an alpha plane), copied a row at a time.
    private static func pixels(of handle: OpaquePointer) throws(WebImageError) -> PixelBuffer {
        try withDecodedPlane(handle, chroma: heif_chroma_interleaved_RGBA, bytesPerPixel: 4) {
            (plane, _, width, height, stride) throws(WebImageError) in
            let rowBytes = width * 4
            let output = [UInt8](unsafeUninitializedCapacity: try PixelBuffer.byteCount(width: width, height: height)) {
                target, initialized in
                for y in 0..<height {
                    (target.baseAddress! + y * rowBytes).update(from: plane + y * stride, count: rowBytes)
                }
                initialized = rowBytes * height
            }
            return PixelBuffer(width: width, height: height, straightRGBA: output)
        }
    }

    /// The primary image's embedded ICC profile and colour description, read from the container
    /// in one pass (for `SourceMetadata`); nils when libheif cannot read it.
    static func containerColor(in data: Data) -> (profile: Data?, description: ColorDescription?) {
        data.withUnsafeBytes { bytes -> (Data?, ColorDescription?) in
            guard let context = try? HEIFContext(bytes.bindMemory(to: UInt8.self)),
                let primary = try? context.primaryImage()
            else { return (nil, nil) }
            defer { heif_image_handle_release(primary) }
            return (colorProfile(of: primary), colorDescription(of: primary).noting(GainMapHEIF.find(in: bytes)))
        }
    }

    /// An image's luma bit depth and its `nclx` colour description (H.273 codes).
    private static func colorDescription(of handle: OpaquePointer) -> ColorDescription {
        var description = ColorDescription(bitDepth: max(1, Int(heif_image_handle_get_luma_bits_per_pixel(handle))))
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        if heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let profile = nclx?.pointee {
            description.primaries = Int(profile.color_primaries.rawValue)
            description.transfer = Int(profile.transfer_characteristics.rawValue)
            description.matrix = Int(profile.matrix_coefficients.rawValue)
        }
        heif_nclx_color_profile_free(nclx)
        return description
    }

    private static func colorProfile(of handle: OpaquePointer) -> Data? {
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0 else { return nil }
        var profile = Data(count: size)
        let error = profile.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) }
        return error.code == heif_error_Ok ? profile : nil
    }

    /// libheif's error as ours: its security limits are `tooLarge`, anything else `otherwise`.
    static func failure(_ error: heif_error, _ what: String, otherwise: WebImageError.Code = .decodeFailed) -> WebImageError {
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
        let code: WebImageError.Code = error.subcode == heif_suberror_Security_limit_exceeded ? .tooLarge : otherwise
        return WebImageError(code, "HEIF \(what): \(message)")
    }

    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard canEncode(to: format) else { throw WebImageError(.unsupportedFormat, "libheif has no HEVC encoder here") }
        guard let context = heif_context_alloc() else { throw WebImageError(.encodeFailed, "libheif could not start") }
        defer { heif_context_free(context) }
        var encoder: OpaquePointer?
        try Self.check(heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder), "encoder")
        defer { heif_encoder_release(encoder) }
        try Self.check(heif_encoder_set_lossy_quality(encoder, Int32((options.quality * 100).rounded())), "quality")
        let picture = try Self.heifImage(image.pixels, alpha: image.hasAlpha || !image.pixels.isOpaque, profile: image.colorProfile)
        defer { heif_image_release(picture) }
        var handle: OpaquePointer?
        try Self.check(heif_context_encode_image(context, picture, encoder, nil, &handle), "image")
        heif_image_handle_release(handle)
        let output = HEIFOutput()
        var writer = heif_writer(writer_api_version: 1) { _, bytes, count, box in
            if let bytes, let box {
                Unmanaged<HEIFOutput>.fromOpaque(box).takeUnretainedValue().data.append(
                    bytes.assumingMemoryBound(to: UInt8.self), count: count)
            }
            return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: nil)
        }
        try Self.check(heif_context_write(context, &writer, Unmanaged.passUnretained(output).toOpaque()), "file")
        return withExtendedLifetime(output) { output.data }
    }

    /// `pixels` as a libheif interleaved RGB(A) image.
    private static func heifImage(_ pixels: PixelBuffer, alpha: Bool, profile: Data?) throws(WebImageError) -> OpaquePointer {
        var image: OpaquePointer?
        let chroma = alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB
        try check(heif_image_create(Int32(pixels.width), Int32(pixels.height), heif_colorspace_RGB, chroma, &image), "image")
        guard let image else { throw WebImageError(.encodeFailed, "libheif made no image") }
        do throws(WebImageError) {
            try check(heif_image_add_plane(image, heif_channel_interleaved, Int32(pixels.width), Int32(pixels.height), 8), "plane")
            var stride: Int32 = 0
            guard let plane = heif_image_get_plane(image, heif_channel_interleaved, &stride) else {
                throw WebImageError(.encodeFailed, "libheif gave no plane")
            }
            let channels = alpha ? 4 : 3
            pixels.bytes.withUnsafeBufferPointer { source in
                for y in 0..<pixels.height {
                    let row = plane + y * Int(stride)
                    for x in 0..<pixels.width {
                        for channel in 0..<channels { row[x * channels + channel] = source[(y * pixels.width + x) * 4 + channel] }
                    }
                }
            }
            if let profile {
                try check(profile.withUnsafeBytes { heif_image_set_raw_color_profile(image, "prof", $0.baseAddress, $0.count) }, "profile")
            }
        } catch {
            heif_image_release(image)
            throw error
        }
        return image
    }

    private static func check(_ error: heif_error, _ what: String) throws(WebImageError) {
        guard error.code == heif_error_Ok else { throw failure(error, "could not encode the \(what)", otherwise: .encodeFailed) }
    }
}

/// Collects what libheif's writer callback hands over.
private final class HEIFOutput {
    var data = Data()
}

/// A libheif context over bytes that outlive it (the caller's `withUnsafeBytes`).
final class HEIFContext {
    let pointer: OpaquePointer

    init(_ bytes: UnsafeBufferPointer<UInt8>) throws(WebImageError) {
        try HEIFItemProperties.check(bytes)
        guard let pointer = heif_context_alloc() else { throw WebImageError(.decodeFailed, "libheif could not start") }
        self.pointer = pointer
        // libheif refuses larger images itself before allocating; ours are checked after.
        heif_context_set_maximum_image_size_limit(pointer, 32_768)
        let error = heif_context_read_from_memory_without_copy(pointer, bytes.baseAddress, bytes.count, nil)
        guard error.code == heif_error_Ok else { throw HEIFCoder.failure(error, "read") }
    }

    deinit { heif_context_free(pointer) }

    /// The primary image's displayed size (after its transforms), from the container alone.
    func primarySize() throws(WebImageError) -> (width: Int, height: Int) {
        let handle = try primaryImage()
        defer { heif_image_handle_release(handle) }
        return (Int(heif_image_handle_get_width(handle)), Int(heif_image_handle_get_height(handle)))
    }

    /// From now on libheif refuses to decode an image with a side of `pixels` or more.
    func limitSides(to pixels: Int) {
        heif_context_set_maximum_image_size_limit(pointer, Int32(clamping: pixels))
    }

    func primaryImage() throws(WebImageError) -> OpaquePointer {
        var handle: OpaquePointer?
        let error = heif_context_get_primary_image_handle(pointer, &handle)
        guard error.code == heif_error_Ok, let handle else { throw HEIFCoder.failure(error, "primary image") }
        return handle
    }
}
