/// Resizes RGBA pixels with a separable kernel: rows first, then columns, each pass split across
/// cores for large images.
///
/// Pixels with transparency are premultiplied as they are read (``PremultipliedPixel``), which
/// keeps transparent edges clean: a transparent pixel contributes nothing, whatever colour it
/// nominally has. Between the passes they stay premultiplied, each channel clamped to 0...255 as
/// Pillow's 8-bit intermediate is, but in 16 bits (``Premultiplied16PixelAccess``), so low-alpha
/// colour keeps its precision; the last pass divides alpha back out. Opaque images skip all of
/// that (``OpaquePixelAccess``) and round to 8 bits between passes, as Pillow does. A 16-bit
/// buffer is read and written at 16 bits (``Opaque16PixelAccess``, ``Straight16PixelAccess``),
/// on the same scale, so its result is the 8-bit one with 8 more bits of precision.
///
/// A resize can keep only a window of its output (a `fill` that is cut to its box right after):
/// only the window's pixels are computed, from only the source rows and columns they read, so a
/// 1x400 image filled to 1000x100 never holds its 1000x400000 scaled whole.
enum Resampler {
    /// Pixels of one pass's input or output: `width * height` pixels of `Access`'s layout.
    private struct Plane {
        let bytes: [UInt8]
        let width: Int
        let height: Int
    }

    /// `source` resized to `width` x `height`, of which only `window` (default all) is made.
    /// - Throws: `WebImageError.Code.tooLarge` when the window, or the pass between the two
    ///   passes, is over ``PixelBuffer/maximumPixelCount``.
    static func resize(_ source: PixelBuffer, width: Int, height: Int, window: ResizeWindow? = nil, filter: ResamplingFilter)
        throws(WebImageError)
        -> PixelBuffer
    {
        precondition(width > 0 && height > 0, "a resize needs a positive size")
        var window = window ?? ResizeWindow(columns: 0..<width, rows: 0..<height)
        precondition(
            !window.columns.isEmpty && !window.rows.isEmpty && window.columns.clamped(to: 0..<width) == window.columns
                && window.rows.clamped(to: 0..<height) == window.rows, "a window inside the resized size")
        _ = try PixelBuffer.byteCount(width: window.columns.count, height: window.rows.count)
        var (source, width, height) = (source, width, height)
        // Along an axis whose size stays, the window is a plain cut, made first: exact, and the
        // pass along the other axis then has less to do.
        if width == source.width, window.columns.count < width {
            source = source.cropped(x: window.columns.lowerBound, y: 0, width: window.columns.count, height: source.height)
            (width, window.columns) = (window.columns.count, 0..<window.columns.count)
        }
        if height == source.height, window.rows.count < height {
            source = source.cropped(x: 0, y: window.rows.lowerBound, width: source.width, height: window.rows.count)
            (height, window.rows) = (window.rows.count, 0..<window.rows.count)
        }
        if width == source.width, height == source.height { return source }
        if filter == .nearest { return try nearest(source, width: width, height: height, window: window) }
        let plane = Plane(bytes: source.bytes, width: source.width, height: source.height)
        let rowWeights =
            width == source.width
            ? nil : ResamplingWeights(inputSize: source.width, outputSize: width, window: window.columns, filter: filter)
        let columnWeights =
            height == source.height
            ? nil : ResamplingWeights(inputSize: source.height, outputSize: height, window: window.rows, filter: filter)
        let output =
            source.isHighBitDepth
            ? try passes(plane, rowWeights, columnWeights, opaque: source.isOpaque, Opaque16PixelAccess.self, Straight16PixelAccess.self)
            : try passes(plane, rowWeights, columnWeights, opaque: source.isOpaque, OpaquePixelAccess.self, StraightPixelAccess.self)
        return PixelBuffer(width: window.columns.count, height: window.rows.count, bitsPerSample: source.bitsPerSample, bytes: output.bytes)
    }

    /// The passes with the pixel layouts of one sample depth: `Opaque`'s when nothing is
    /// transparent; `Straight`'s otherwise, with premultiplied 16-bit pixels between two passes.
    private static func passes<Opaque: PixelAccess, Straight: PixelAccess>(
        _ plane: Plane, _ rowWeights: ResamplingWeights?, _ columnWeights: ResamplingWeights?, opaque: Bool, _: Opaque.Type,
        _: Straight.Type
    ) throws(WebImageError) -> Plane {
        if opaque { return try passes(plane, rowWeights, columnWeights, Opaque.self, Opaque.self) }
        if rowWeights == nil || columnWeights == nil { return try passes(plane, rowWeights, columnWeights, Straight.self, Straight.self) }
        return try passes(plane, rowWeights, columnWeights, Straight.self, Premultiplied16PixelAccess.self)
    }

    /// One pass per axis that has weights, rows first, unless the rows-first intermediate would be
    /// larger than both the source and the result and columns first makes a smaller one (a very
    /// tall image stretched wide, where rows first would widen every one of its rows).
    private static func passes<Input: PixelAccess, Between: PixelAccess>(
        _ plane: Plane, _ rowWeights: ResamplingWeights?, _ columnWeights: ResamplingWeights?, _ input: Input.Type,
        _ between: Between.Type
    ) throws(WebImageError) -> Plane {
        guard let rowWeights else {
            guard let columnWeights else { return plane }
            return pass(columnsOf: plane, columns: 0..<plane.width, columnWeights, firstRow: 0, Input.self, Input.self)
        }
        guard let columnWeights else {
            return pass(rowsOf: plane, rows: 0..<plane.height, rowWeights, firstColumn: 0, Input.self, Input.self)
        }
        let rows = columnWeights.sourceRange
        let columns = rowWeights.sourceRange
        let rowsFirst = rows.count.multipliedReportingOverflow(by: rowWeights.count)
        let columnsFirst = columns.count * columnWeights.count
        let largest = max(plane.width * plane.height, rowWeights.count * columnWeights.count)
        if rowsFirst.overflow || (rowsFirst.partialValue > largest && columnsFirst < rowsFirst.partialValue) {
            _ = try PixelBuffer.byteCount(width: columns.count, height: columnWeights.count, bytesPerPixel: Between.bytesPerPixel)
            let narrow = pass(columnsOf: plane, columns: columns, columnWeights, firstRow: 0, Input.self, Between.self)
            return pass(rowsOf: narrow, rows: 0..<narrow.height, rowWeights, firstColumn: columns.lowerBound, Between.self, Input.self)
        }
        _ = try PixelBuffer.byteCount(width: rowWeights.count, height: rows.count, bytesPerPixel: Between.bytesPerPixel)
        let wide = pass(rowsOf: plane, rows: rows, rowWeights, firstColumn: 0, Input.self, Between.self)
        return pass(columnsOf: wide, columns: 0..<wide.width, columnWeights, firstRow: rows.lowerBound, Between.self, Input.self)
    }

    /// The source's `rows`, each resampled to the weights' positions; `firstColumn` is the source
    /// column the plane's first column stands for.
    private static func pass<Input: PixelAccess, Output: PixelAccess>(
        rowsOf source: Plane, rows: Range<Int>, _ weights: ResamplingWeights, firstColumn: Int, _ input: Input.Type,
        _ output: Output.Type
    ) -> Plane {
        let width = weights.count
        let bytes = ParallelRows.fill(rows: rows.count, width: width * Output.bytesPerPixel / 4) { index, outputRow in
            // The source row read (and premultiplied) once into floats: a shrinking kernel reads
            // each source pixel several times (about 6 for Lanczos3 at a tenth), and premultiplying
            // at every read made translucent resizing 2.4 times slower than opaque.
            let line = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: source.width)
            defer { line.deallocate() }
            source.bytes.withUnsafeBytes { pixels in
                let sourceRow = pixels.baseAddress! + (rows.lowerBound + index) * source.width * Input.bytesPerPixel
                for x in 0..<source.width { line[x] = Input.load(sourceRow + x * Input.bytesPerPixel) }
            }
            weights.withPointers { starts, counts, taps in
                for x in 0..<width {
                    let first = line + (starts[x] - firstColumn)
                    let row = taps + x * weights.stride
                    var sum = SIMD4<Float>(repeating: 0)
                    for tap in 0..<counts[x] { sum += first[tap] * row[tap] }
                    Output.store(sum, to: outputRow + x * Output.bytesPerPixel)
                }
            }
        }
        return Plane(bytes: bytes, width: width, height: rows.count)
    }

    /// The source's `columns`, each resampled to the weights' positions; `firstRow` is the source
    /// row the plane's first row stands for.
    private static func pass<Input: PixelAccess, Output: PixelAccess>(
        columnsOf source: Plane, columns: Range<Int>, _ weights: ResamplingWeights, firstRow: Int, _ input: Input.Type,
        _ output: Output.Type
    ) -> Plane {
        let width = columns.count
        let bytes = ParallelRows.fill(rows: weights.count, width: width * Output.bytesPerPixel / 4) { y, outputRow in
            // One row of sums, filled tap by tap: each source row is read front to back.
            let sums = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: width)
            defer { sums.deallocate() }
            sums.initialize(repeating: .zero, count: width)
            source.bytes.withUnsafeBytes { pixels in
                weights.withPointers { starts, counts, taps in
                    for tap in 0..<counts[y] {
                        let weight = taps[y * weights.stride + tap]
                        let sourceRow =
                            pixels.baseAddress! + ((starts[y] - firstRow + tap) * source.width + columns.lowerBound) * Input.bytesPerPixel
                        for x in 0..<width {
                            sums[x] += Input.load(sourceRow + x * Input.bytesPerPixel) * weight
                        }
                    }
                }
            }
            for x in 0..<width { Output.store(sums[x], to: outputRow + x * Output.bytesPerPixel) }
        }
        return Plane(bytes: bytes, width: width, height: weights.count)
    }

    /// Each output pixel takes the source pixel under its centre.
    private static func nearest(_ source: PixelBuffer, width: Int, height: Int, window: ResizeWindow) throws(WebImageError) -> PixelBuffer {
        source.isHighBitDepth
            ? try nearest(source, width: width, height: height, window: window, as: UInt64.self)
            : try nearest(source, width: width, height: height, window: window, as: UInt32.self)
    }

    /// ``nearest(_:width:height:window:)`` copying whole pixels of `Pixel`'s size.
    private static func nearest<Pixel: FixedWidthInteger>(
        _ source: PixelBuffer, width: Int, height: Int, window: ResizeWindow, as pixel: Pixel.Type
    ) throws(WebImageError) -> PixelBuffer {
        let columns = window.columns.map { min(Int((Double($0) + 0.5) * Double(source.width) / Double(width)), source.width - 1) }
        let outputWidth = window.columns.count
        let size = MemoryLayout<Pixel>.size
        var output = try PixelBuffer.zeroedBytes(width: outputWidth, height: window.rows.count, bytesPerPixel: size)
        source.bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                for (index, y) in window.rows.enumerated() {
                    let sourceY = min(Int((Double(y) + 0.5) * Double(source.height) / Double(height)), source.height - 1)
                    let sourceRow = sourceY * source.bytesPerRow
                    for x in 0..<outputWidth {
                        output.storeBytes(
                            of: input.loadUnaligned(fromByteOffset: sourceRow + columns[x] * size, as: Pixel.self),
                            toByteOffset: (index * outputWidth + x) * size, as: Pixel.self)
                    }
                }
            }
        }
        return PixelBuffer(width: outputWidth, height: window.rows.count, bitsPerSample: source.bitsPerSample, bytes: output)
    }

    /// The nearest 8-bit values, clamped to 0...255. Converts lane by lane: the generic SIMD
    /// integer conversion is many times slower than four scalar conversions.
    @inline(__always)
    static func rounded(_ value: SIMD4<Float>) -> SIMD4<UInt8> {
        @inline(__always) func lane(_ channel: Float) -> UInt8 {
            UInt8(truncatingIfNeeded: Int32(Swift.min(Swift.max(channel + 0.5, 0), 255)))
        }
        return SIMD4(lane(value[0]), lane(value[1]), lane(value[2]), lane(value[3]))
    }
}
