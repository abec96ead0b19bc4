package import Foundation
import CTurboJPEG
import CWebImageCodecs

/// A JPEG resized into a JPEG without leaving YCbCr: decoded at a DCT scale that covers the
/// resize (``decodedSize(width:height:target:)``) straight into its Y, Cb and Cr planes, each
/// plane resampled on its own (the chroma planes at their subsampled size), and the planes
/// encoded as 4:2:0. Only the blocks the resampling reads are decoded (a crop's middle, a
/// window's part, ``BlockGeometry``): libjpeg inverse-transforms only their columns and stops
/// reading after their last row; a file of several scans is decoded whole.
///
/// The general path (``JPEGCoder`` to RGBA, ``ResizingTransformer``, ``JPEGCoder`` again)
/// converts every pixel to RGB, upsamples the chroma to full size, resamples four channels,
/// then converts back and subsamples the chroma again: for a thumbnail of a photograph that is
/// about a third of the work besides the entropy decoding. Resampling is linear and so is the
/// YCbCr conversion, so resampling the planes gives the image the general path gives from a
/// decode at the same scale, to within rounding (and the 4:2:0 chroma it would have subsampled
/// to anyway).
///
/// Only the files this suits take it: a three-component YCbCr JPEG in 4:4:4, 4:2:2 or 4:2:0 about
/// which libjpeg-turbo warns of nothing, with no colour profile to convert (or one that describes sRGB itself);
/// ``recompress(_:quality:limits:)`` returns nil for any other, and the general path decodes it
/// as it always has, warnings and all.
package struct JPEGPlanarResize: Sendable {
    /// The size the whole image is resampled to.
    package var width: Int
    package var height: Int
    /// The part of the resampled image kept (all of it by default).
    package var window: ResizeWindow
    package var filter: ResamplingFilter

    /// A resize of the whole image to `width` x `height`, of which `window` is kept.
    package init(width: Int, height: Int, window: ResizeWindow? = nil, filter: ResamplingFilter) {
        precondition(width > 0 && height > 0, "a resize needs a positive size")
        self.width = width
        self.height = height
        self.window = window ?? ResizeWindow(x: 0, y: 0, width: width, height: height)
        self.filter = filter
    }

    /// The resized image as a baseline 4:2:0 JPEG, or nil when `data` is not a JPEG this path
    /// takes (see the type's notes): ``decode(_:limits:)``, ``resampled(_:)`` and
    /// ``encode(_:quality:)`` in turn.
    /// - Throws: `WebImageError.Code.tooLarge` when the declared or the DCT-scaled size is over
    ///   `limits`, as the general path's decode would; `.encodeFailed` when libjpeg-turbo cannot
    ///   encode the planes.
    package func recompress(_ data: Data, quality: Int, limits: DecodeLimits) throws(WebImageError) -> Data? {
        guard let planes = try decode(data, limits: limits) else { return nil }
        return try encode(resampled(planes), quality: quality)
    }

    /// `data` decoded to YCbCr planes at the DCT scale that covers the resize, or nil when it is
    /// not a JPEG this path takes, or when `keepsEXIF` says the caller would keep some of its
    /// EXIF (asked before any pixel is decoded; the planes' encode writes none).
    /// - Throws: `WebImageError.Code.tooLarge` when the declared or the DCT-scaled size is over
    ///   `limits`.
    package func decode(_ data: Data, limits: DecodeLimits, keepsEXIF: (Data) -> Bool = { _ in false }) throws(WebImageError)
        -> Planes?
    {
        let metadata = SourceMetadata(data, format: .jpeg)
        // A colour profile to convert from goes the general path, which converts the RGB pixels.
        if let colorSpace = metadata.colorSpace, !ColorManagement.convertsNothing(from: colorSpace) { return nil }
        if let exif = metadata.exif, keepsEXIF(exif) { return nil }
        guard let decompressor = tjInitDecompress() else { return nil }
        defer { tjDestroy(decompressor) }
        return try data.withTypedBytes { bytes throws(WebImageError) in try decode(bytes, decompressor, limits: limits) }
    }

    /// The size this path decodes a `width` x `height` JPEG to for a resize to `target`: the
    /// smallest of libjpeg's DCT scales with a SIMD inverse DCT (1/8, 1/4, 1/2, 1) that covers
    /// `target`, faster to decode than a finer scale (3/8, 5/8...) nearer it; the plane
    /// resampler does the rest. The general path's decode also takes this size when asked for a
    /// thumbnail of it.
    package static func decodedSize(width: Int, height: Int, target: (width: Int, height: Int)) -> (width: Int, height: Int) {
        let factor = scalingFactor(width: width, height: height, target: target)
        return (Int(JPEGCoder.scaled(Int32(width), factor)), Int(JPEGCoder.scaled(Int32(height), factor)))
    }

    private static func scalingFactor(width: Int, height: Int, target: (width: Int, height: Int)) -> tjscalingfactor {
        JPEGCoder.scalingFactor(
            width: width, height: height,
            thumbnail: ThumbnailSize(width: target.width, height: target.height, preservesAspectRatio: false, resamples: false),
            simdOnly: true)
    }

    /// One 8-bit plane, or the part of one a resize reads: `width` x `height` samples in rows
    /// `stride` apart, the first of them at `origin` in the whole plane, which is `extent` in
    /// size. The rows and columns past `width` and `height` are padding the codec reads or
    /// writes whole blocks in (a 4:2:0 luma plane of an odd width has one more column).
    package struct Plane: Sendable {
        var bytes: [UInt8]
        var width: Int
        var height: Int
        var stride: Int
        var origin: (x: Int, y: Int)
        var extent: (width: Int, height: Int)

        init(width: Int, height: Int, stride: Int, rows: Int) {
            bytes = uninitialized(stride * rows)
            (self.width, self.height, self.stride) = (width, height, stride)
            (origin, extent) = ((0, 0), (width, height))
        }

        /// The part of a plane of `extent` from `origin` on, `stride` x `rows` bytes: `width`
        /// x `height` of it inside the plane.
        init(origin: (x: Int, y: Int), extent: (width: Int, height: Int), stride: Int, rows: Int) {
            self.init(width: min(stride, extent.width - origin.x), height: min(rows, extent.height - origin.y), stride: stride, rows: rows)
            (self.origin, self.extent) = (origin, extent)
        }
    }

    /// A YCbCr image as three planes, the chroma planes `chromaStep` times smaller each way:
    /// what ``decode(_:limits:keepsEXIF:)`` makes, ``resampled(_:)`` resizes and
    /// ``encode(_:quality:)`` writes.
    package struct Planes: Sendable {
        var luma: Plane
        var blue: Plane
        var red: Plane
        var chromaStep: (x: Int, y: Int)
        /// The resize's passes the decode chose its window by, for ``resampled(_:)`` to reuse
        /// (nil for its result, which is not resampled again).
        var passes: Passes?

        /// TurboJPEG's planes for a `width` x `height` image in `subsampling`.
        init(width: Int32, height: Int32, subsampling: Int32, chromaStep: (x: Int, y: Int)) {
            func plane(_ component: Int32, logical: (width: Int, height: Int)?) -> Plane {
                let (stride, rows) = (Int(tjPlaneWidth(component, width, subsampling)), Int(tjPlaneHeight(component, height, subsampling)))
                return Plane(width: logical?.width ?? stride, height: logical?.height ?? rows, stride: stride, rows: rows)
            }
            luma = plane(0, logical: (Int(width), Int(height)))
            blue = plane(1, logical: nil)
            red = plane(2, logical: nil)
            self.chromaStep = chromaStep
        }

        init(luma: Plane, blue: Plane, red: Plane, chromaStep: (x: Int, y: Int), passes: Passes) {
            (self.luma, self.blue, self.red, self.chromaStep, self.passes) = (luma, blue, red, chromaStep, passes)
        }
    }

    /// The four resampling passes of a resize of planes: luma and chroma, across and down.
    struct Passes: Sendable {
        var lumaColumns: ResamplingWeights
        var lumaRows: ResamplingWeights
        var chromaColumns: ResamplingWeights
        var chromaRows: ResamplingWeights
    }

    /// The passes that resize whole planes of `luma` and `chroma` size (the chroma `chromaStep`
    /// times smaller) to the window, as 4:2:0.
    func passes(luma: (width: Int, height: Int), chroma: (width: Int, height: Int), chromaStep: (x: Int, y: Int)) -> Passes {
        let (scaleX, scaleY) = (Double(luma.width) / Double(width), Double(luma.height) / Double(height))
        let output = (width: window.columns.count, height: window.rows.count)
        // An output chroma sample covers two output luma samples each way; in source chroma
        // samples, its centre is the luma centre scaled, divided by the source's chroma step.
        return Passes(
            lumaColumns: ResamplingWeights(
                inputSize: luma.width, scale: scaleX, offset: Double(window.columns.lowerBound), count: output.width, filter: filter),
            lumaRows: ResamplingWeights(
                inputSize: luma.height, scale: scaleY, offset: Double(window.rows.lowerBound), count: output.height, filter: filter),
            chromaColumns: ResamplingWeights(
                inputSize: chroma.width, scale: scaleX * 2 / Double(chromaStep.x), offset: Double(window.columns.lowerBound) / 2,
                count: (output.width + 1) / 2, filter: filter),
            chromaRows: ResamplingWeights(
                inputSize: chroma.height, scale: scaleY * 2 / Double(chromaStep.y), offset: Double(window.rows.lowerBound) / 2,
                count: (output.height + 1) / 2, filter: filter))
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, _ handle: tjhandle, limits: DecodeLimits) throws(WebImageError) -> Planes? {
        let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var (sourceWidth, sourceHeight, subsampling, colorspace): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        guard tjDecompressHeader3(handle, source, UInt(bytes.count), &sourceWidth, &sourceHeight, &subsampling, &colorspace) == 0,
            sourceWidth > 0, sourceHeight > 0, colorspace == Int32(TJCS_YCbCr.rawValue), let step = Self.chromaStep(subsampling)
        else { return nil }
        try limits.checkDeclared(width: Int(sourceWidth), height: Int(sourceHeight))
        let factor = Self.scalingFactor(width: Int(sourceWidth), height: Int(sourceHeight), target: (width, height))
        let geometry = BlockGeometry(
            source: (Int(sourceWidth), Int(sourceHeight)), eighths: Int(8 * factor.num / factor.denom), chromaStep: step)
        try limits.check(width: geometry.luma.width, height: geometry.luma.height, inputSize: bytes.count)
        let passes = passes(luma: geometry.luma, chroma: geometry.chroma, chromaStep: step)
        switch geometry.decode(bytes, window: geometry.window(reading: passes), passes: passes) {
        case .decoded(let planes): return planes
        // A file of several scans is read whole before its first row anyway.
        case .wholeImageNeeded:
            if case .decoded(let planes) = geometry.decode(bytes, window: geometry.wholeImage, passes: passes) { return planes }
            return nil
        // Any warning (damage libjpeg worked around, data that ends early) goes to the general
        // path, which decides what such a file becomes.
        case .declined: return nil
        }
    }

    /// How many luma samples each chroma sample spans across and down, for the subsamplings this
    /// path takes.
    private static func chromaStep(_ subsampling: Int32) -> (x: Int, y: Int)? {
        switch subsampling {
        case Int32(TJSAMP_444.rawValue): (1, 1)
        case Int32(TJSAMP_422.rawValue): (2, 1)
        case Int32(TJSAMP_420.rawValue): (2, 2)
        default: nil
        }
    }

    /// The window of the resize, as 4:2:0 planes, from planes this resize's
    /// ``decode(_:limits:keepsEXIF:)`` made (which hold only the part its passes read).
    package func resampled(_ planes: Planes) -> Planes {
        guard let passes = planes.passes, passes.lumaColumns.count == window.columns.count, passes.lumaRows.count == window.rows.count
        else { preconditionFailure("planes are resampled by the resize that decoded them") }
        var output = Planes(
            width: Int32(window.columns.count), height: Int32(window.rows.count), subsampling: Int32(TJSAMP_420.rawValue),
            chromaStep: (2, 2))
        Self.resample(planes.luma, into: &output.luma, columns: passes.lumaColumns, rows: passes.lumaRows)
        Self.resample(planes.blue, into: &output.blue, columns: passes.chromaColumns, rows: passes.chromaRows)
        Self.resample(planes.red, into: &output.red, columns: passes.chromaColumns, rows: passes.chromaRows)
        return output
    }

    /// `source` resampled into `output`'s `width` x `height`, then its padding (the column and
    /// row past an odd size) filled with copies of the edge, as libjpeg pads an image itself.
    private static func resample(_ source: Plane, into output: inout Plane, columns: ResamplingWeights, rows: ResamplingWeights) {
        let (columns, rows) = (columns.shifted(by: source.origin.x), rows.shifted(by: source.origin.y))
        // The row pass reads four taps at a time: three floats past the line, and every
        // position's weights padded to a multiple of four.
        let line = UnsafeMutablePointer<Float>.allocate(capacity: source.width + 3)
        let sums = UnsafeMutablePointer<Float>.allocate(capacity: columns.count)
        let starts = UnsafeMutablePointer<Int>.allocate(capacity: columns.count)
        let weights = UnsafeMutablePointer<Float>.allocate(capacity: columns.count * ((columns.stride + 3) / 4 * 4))
        defer {
            line.deallocate()
            sums.deallocate()
            starts.deallocate()
            weights.deallocate()
        }
        let scratch = cwi_plane_scratch(line: line, sums: sums, starts: starts, weights: weights)
        let (stride, width, height) = (output.stride, output.width, output.height)
        columns.withPointers { columnStarts, columnCounts, columnTaps in
            rows.withPointers { rowStarts, rowCounts, rowTaps in
                let copiedColumn = columns.copiedFrom
                var columnWeights = cwi_plane_weights(
                    starts: columnStarts, counts: columnCounts, weights: columnTaps, stride: columns.stride, count: columns.count,
                    first_source: copiedColumn ?? 0, source_count: source.width, copies: copiedColumn == nil ? 0 : 1)
                let copiedRow = rows.copiedFrom
                var rowWeights = cwi_plane_weights(
                    starts: rowStarts, counts: rowCounts, weights: rowTaps, stride: rows.stride, count: rows.count,
                    first_source: copiedRow ?? 0, source_count: source.height, copies: copiedRow == nil ? 0 : 1)
                source.bytes.withUnsafeBufferPointer { input in
                    cwi_resample_plane(input.baseAddress, source.stride, &output.bytes, stride, &columnWeights, &rowWeights, scratch)
                }
            }
        }
        output.bytes.withUnsafeMutableBufferPointer { bytes in
            for row in 0..<height where stride > width {
                for column in width..<stride { bytes[row * stride + column] = bytes[row * stride + width - 1] }
            }
            for row in height..<(bytes.count / stride) {
                for column in 0..<stride { bytes[row * stride + column] = bytes[(height - 1) * stride + column] }
            }
        }
    }

    /// The planes as a baseline 4:2:0 JPEG at libjpeg's `quality` (1 to 100, clamped).
    /// - Throws: `WebImageError.Code.encodeFailed` when libjpeg-turbo cannot encode them.
    package func encode(_ planes: Planes, quality: Int) throws(WebImageError) -> Data {
        guard let compressor = tjInitCompress() else { throw WebImageError(.encodeFailed, "TurboJPEG could not start") }
        defer { tjDestroy(compressor) }
        var strides = [planes.luma, planes.blue, planes.red].map { Int32($0.stride) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = planes.luma.bytes.withUnsafeBufferPointer { luma in
            planes.blue.bytes.withUnsafeBufferPointer { blue in
                planes.red.bytes.withUnsafeBufferPointer { red in
                    var pointers: [UnsafePointer<UInt8>?] = [luma.baseAddress, blue.baseAddress, red.baseAddress]
                    return tjCompressFromYUVPlanes(
                        compressor, &pointers, Int32(planes.luma.width), &strides, Int32(planes.luma.height),
                        Int32(TJSAMP_420.rawValue), &output, &size, Int32(max(1, min(100, quality))), 0)
                }
            }
        }
        defer { tjFree(output) }
        guard status == 0, let output else {
            throw WebImageError(.encodeFailed, "JPEG: \(JPEGCoder.message(compressor))")
        }
        return Data(bytes: output, count: Int(size))
    }
}

/// Bytes every one of which the caller writes before reading: no zeroing pass.
private func uninitialized(_ count: Int) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
}
