/// Where transforms premultiply: pixels are stored straight (``PixelBuffer``), and every transform
/// that mixes pixels reads them multiplied by alpha in floating point and writes the result back
/// straight, dividing by the unrounded alpha. A transparent pixel then adds no colour to its
/// neighbours, and the only rounding is the final one to 8 bits.
enum PremultipliedPixel {
    /// The straight 8-bit pixel at `pointer`, premultiplied: channels in 0...255.
    @inline(__always)
    static func load(_ pointer: UnsafeRawPointer) -> SIMD4<Float> {
        premultiplied(SIMD4<Float>(pointer.loadUnaligned(as: SIMD4<UInt8>.self)))
    }

    /// A straight pixel in 0...255 multiplied by its alpha.
    @inline(__always)
    static func premultiplied(_ pixel: SIMD4<Float>) -> SIMD4<Float> {
        let alpha = pixel[3] * (1 / 255)
        return pixel * SIMD4(alpha, alpha, alpha, 1)
    }

    /// Writes a premultiplied value as a straight 8-bit pixel: alpha clamped and rounded, colour
    /// divided by the alpha before rounding and clamped to 0...255 (kernels with negative lobes
    /// can push colour past alpha). A pixel whose alpha rounds to 0 is `(0, 0, 0, 0)`.
    @inline(__always)
    static func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<UInt8>) {
        let alpha = Swift.min(Swift.max(value[3], 0), 255)
        guard alpha >= 0.5 else {
            UnsafeMutableRawPointer(pointer).storeBytes(of: 0, as: UInt32.self)
            return
        }
        let scale = 255 / alpha
        let straight = Resampler.rounded(SIMD4(value[0] * scale, value[1] * scale, value[2] * scale, alpha))
        UnsafeMutableRawPointer(pointer).storeBytes(of: straight, as: SIMD4<UInt8>.self)
    }
}

/// How a pass reads and writes 8-bit pixels: ``OpaquePixelAccess`` when the source has no
/// transparency (premultiplying would multiply by one), ``StraightPixelAccess`` otherwise. Generic passes are specialised
/// for each, so an opaque image pays nothing for alpha.
protocol PixelAccess: SendableMetatype {
    /// Bytes per pixel of the layout: 4, or 8 for ``Premultiplied16PixelAccess``.
    static var bytesPerPixel: Int { get }
    static func load(_ pointer: UnsafeRawPointer) -> SIMD4<Float>
    static func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<UInt8>)
}

/// Opaque pixels: straight and premultiplied are the same values.
enum OpaquePixelAccess: PixelAccess {
    static var bytesPerPixel: Int { 4 }

    @inline(__always)
    static func load(_ pointer: UnsafeRawPointer) -> SIMD4<Float> {
        SIMD4<Float>(pointer.loadUnaligned(as: SIMD4<UInt8>.self))
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: Resampler.rounded(value), as: SIMD4<UInt8>.self)
    }
}

/// Pixels with transparency: premultiplied on load, divided out on store.
enum StraightPixelAccess: PixelAccess {
    static var bytesPerPixel: Int { 4 }

    @inline(__always)
    static func load(_ pointer: UnsafeRawPointer) -> SIMD4<Float> { PremultipliedPixel.load(pointer) }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<UInt8>) { PremultipliedPixel.store(value, to: pointer) }
}

/// Pixels in 16 bits a channel (the 0...255 value times 257), each channel clamped to 0...255 on
/// its own, with nothing multiplied or divided: the resampler's premultiplied intermediate image
/// (where Pillow keeps 8 bits), and opaque 16-bit images (``Opaque16PixelAccess``).
enum Premultiplied16PixelAccess: PixelAccess {
    static var bytesPerPixel: Int { 8 }

    @inline(__always)
    static func load(_ pointer: UnsafeRawPointer) -> SIMD4<Float> {
        SIMD4<Float>(pointer.loadUnaligned(as: SIMD4<UInt16>.self)) * (1 / 257)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<UInt8>) {
        @inline(__always) func lane(_ channel: Float) -> UInt16 {
            UInt16(truncatingIfNeeded: Int32(Swift.min(Swift.max(channel, 0), 255) * 257 + 0.5))
        }
        let stored = SIMD4(lane(value[0]), lane(value[1]), lane(value[2]), lane(value[3]))
        UnsafeMutableRawPointer(pointer).storeBytes(of: stored, as: SIMD4<UInt16>.self)
    }
}

/// Opaque 16-bit pixels: read and written as they are, on the 0...255 scale the kernels use.
typealias Opaque16PixelAccess = Premultiplied16PixelAccess

/// 16-bit pixels with transparency (``PixelBuffer/isHighBitDepth``): premultiplied on load,
/// divided out on store, as ``StraightPixelAccess`` does for 8 bits.
enum Straight16PixelAccess: PixelAccess {
    static var bytesPerPixel: Int { 8 }

    @inline(__always)
    static func load(_ pointer: UnsafeRawPointer) -> SIMD4<Float> {
        PremultipliedPixel.premultiplied(Premultiplied16PixelAccess.load(pointer))
    }

    /// A pixel whose alpha is under half a 16-bit level is `(0, 0, 0, 0)`.
    @inline(__always)
    static func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<UInt8>) {
        let alpha = Swift.min(Swift.max(value[3], 0), 255)
        guard alpha >= 0.5 / 257 else {
            UnsafeMutableRawPointer(pointer).storeBytes(of: 0, as: UInt64.self)
            return
        }
        let scale = 255 / alpha
        Premultiplied16PixelAccess.store(SIMD4(value[0] * scale, value[1] * scale, value[2] * scale, alpha), to: pointer)
    }
}
