package import Foundation
import CWebP

extension WebPCoder {
    /// A JPEG's resized planes (``JPEGPlanarResize/resampled(_:)``: full-range YCbCr, 4:2:0) as a
    /// lossy still WebP at `options`' quality, method and preset, with no RGB between: libwebp
    /// encodes 4:2:0 YUV itself, and takes RGBA only to convert it to that.
    ///
    /// The two differ in range only: JPEG's YCbCr (JFIF) uses all of 0-255, WebP's YUV is
    /// BT.601's studio range (luma 16-235, chroma 16-240 about 128), as libwebp's own conversion
    /// from RGB makes it. So each sample is mapped once: luma `16 + Y × 219/255`, chroma
    /// `128 + (C − 128) × 224/255`. The picture is the one the RGBA path makes from the same
    /// decode to within rounding (the RGBA path also clips colours outside RGB's cube).
    /// - Throws: `WebImageError.Code.encodeFailed` when libwebp refuses the options or the size.
    package static func encode(_ planes: JPEGPlanarResize.Planes, options: EncodeOptions) throws(WebImageError) -> Data {
        guard planes.chromaStep == (2, 2) else { throw WebImageError(.encodeFailed, "WebP takes 4:2:0 planes only") }
        var config = try Self.config(options)
        var luma = Self.studioRange(planes.luma, scale: 219, offset: 16, centre: 0)
        var blue = Self.studioRange(planes.blue, scale: 224, offset: 128, centre: 128)
        var red = Self.studioRange(planes.red, scale: 224, offset: 128, centre: 128)
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw WebImageError(.encodeFailed, "libwebp version mismatch") }
        let (width, height) = (planes.luma.width, planes.luma.height)
        let error = luma.withUnsafeMutableBufferPointer { luma in
            blue.withUnsafeMutableBufferPointer { blue in
                red.withUnsafeMutableBufferPointer { red in
                    withUnsafeMutablePointer(to: &writer) { writer -> UInt32? in
                        // The planes stay ours: libwebp reads them and allocates nothing in the
                        // picture, so there is nothing of it to free.
                        picture.use_argb = 0
                        picture.colorspace = WEBP_YUV420
                        picture.width = Int32(width)
                        picture.height = Int32(height)
                        (picture.y, picture.u, picture.v) = (luma.baseAddress, blue.baseAddress, red.baseAddress)
                        picture.y_stride = Int32(planes.luma.stride)
                        picture.uv_stride = Int32(planes.blue.stride)
                        picture.writer = WebPMemoryWrite
                        picture.custom_ptr = UnsafeMutableRawPointer(writer)
                        return WebPEncode(&config, &picture) != 0 ? nil : picture.error_code.rawValue
                    }
                }
            }
        }
        guard error == nil, let memory = writer.mem, writer.size > 0 else {
            throw WebImageError(.encodeFailed, "libwebp could not encode \(width)x\(height) planes (error \(error ?? 0))")
        }
        return Data(bytes: memory, count: writer.size)
    }

    /// `plane`'s samples mapped from full range to studio range: `offset + (sample − centre) ×
    /// scale / 255`, rounded.
    private static func studioRange(_ plane: JPEGPlanarResize.Plane, scale: Int, offset: Int, centre: Int) -> [UInt8] {
        let table = (0..<256).map { UInt8(offset + (($0 - centre) * scale * 2 + 255 * ($0 >= centre ? 1 : -1)) / 510) }
        return table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: plane.bytes.count) { mapped, initialized in
                for index in plane.bytes.indices { mapped[index] = table[Int(plane.bytes[index])] }
                initialized = plane.bytes.count
            }
        }
    }
}
