package import Foundation
import CWebP

extension WebPCoder {
    /// A JPEG's resized planes (``JPEGPlanarResize/resampled(_:)``: full-range YCbCr, 4:2:0) in
    /// the YUV libwebp encodes, made once for any number of encodes (`autoquality`, `max_bytes`).
    ///
    /// The two differ in range only: JPEG's YCbCr (JFIF) uses all of 0-255, WebP's YUV is
    /// BT.601's studio range (luma 16-235, chroma 16-240 about 128), as libwebp's own conversion
    /// from RGB makes it. So each sample is mapped once: luma `16 + Y × 219/255`, chroma
    /// `128 + (C − 128) × 224/255`.
    package struct YUVPlanes: Sendable {
        fileprivate let luma: JPEGPlanarResize.Plane
        fileprivate let blue: JPEGPlanarResize.Plane
        fileprivate let red: JPEGPlanarResize.Plane

        /// `planes` must be 4:2:0, as ``JPEGPlanarResize/resampled(_:)`` makes them.
        package init(_ planes: JPEGPlanarResize.Planes) {
            precondition(planes.chromaStep == (2, 2), "WebP takes 4:2:0 planes")
            luma = Self.studioRange(planes.luma, scale: 219, offset: 16, centre: 0)
            blue = Self.studioRange(planes.blue, scale: 224, offset: 128, centre: 128)
            red = Self.studioRange(planes.red, scale: 224, offset: 128, centre: 128)
        }

        /// `plane` with its samples mapped from full range to studio range: `offset + (sample −
        /// centre) × scale / 255`, rounded.
        private static func studioRange(_ plane: JPEGPlanarResize.Plane, scale: Int, offset: Int, centre: Int) -> JPEGPlanarResize.Plane {
            let table = (0..<256).map { UInt8(offset + (($0 - centre) * scale * 2 + 255 * ($0 >= centre ? 1 : -1)) / 510) }
            var mapped = plane
            table.withUnsafeBufferPointer { table in
                mapped.bytes.withUnsafeMutableBufferPointer { bytes in
                    for index in bytes.indices { bytes[index] = table[Int(bytes[index])] }
                }
            }
            return mapped
        }
    }

    /// `planes` as a lossy still WebP at `options`' quality, method and preset, with no RGB
    /// between: libwebp encodes 4:2:0 YUV itself, and takes RGBA only to convert it to that. The
    /// picture is the one the RGBA path makes from the same decode to within rounding (the RGBA
    /// path also clips colours outside RGB's cube).
    /// - Throws: `WebImageError.Code.encodeFailed` when libwebp refuses the options or the size.
    package static func encode(_ planes: YUVPlanes, options: EncodeOptions) throws(WebImageError) -> Data {
        var config = try Self.config(options)
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw WebImageError(.encodeFailed, "libwebp version mismatch") }
        // Frees only what libwebp allocates in the picture (the ARGB a lossless encode converts
        // to), never the planes it points at.
        defer { WebPPictureFree(&picture) }
        let (width, height) = (planes.luma.width, planes.luma.height)
        return try planes.luma.bytes.withUnsafeBufferPointer { luma in
            planes.blue.bytes.withUnsafeBufferPointer { blue in
                planes.red.bytes.withUnsafeBufferPointer { red in
                    // The planes stay ours: a lossy encode of a picture without alpha only reads
                    // them (the picture takes mutable pointers).
                    picture.use_argb = 0
                    picture.colorspace = WEBP_YUV420
                    picture.width = Int32(width)
                    picture.height = Int32(height)
                    picture.y = UnsafeMutablePointer(mutating: luma.baseAddress)
                    picture.u = UnsafeMutablePointer(mutating: blue.baseAddress)
                    picture.v = UnsafeMutablePointer(mutating: red.baseAddress)
                    picture.y_stride = Int32(planes.luma.stride)
                    picture.uv_stride = Int32(planes.blue.stride)
                    return Result { () throws(WebImageError) in
                        try encoded(&picture, config: &config, describing: "\(width)x\(height) planes")
                    }
                }
            }
        }.get()
    }
}
