/// Resizes RGBA pixels with a separable kernel: rows first, then columns, each pass split across
/// cores for large images.
///
/// Pixels with transparency are premultiplied as they are read (``PremultipliedPixel``), which
/// keeps transparent edges clean: a transparent pixel contributes nothing, whatever colour it
/// nominally has. Between the passes they stay premultiplied, each channel clamped to 0...255 as
/// Pillow's 8-bit intermediate is, but in 16 bits (``Premultiplied16PixelAccess``), so low-alpha
/// colour keeps its precision; the last pass divides alpha back out. Opaque images skip all of
/// that (``OpaquePixelAccess``) and round to 8 bits between passes, as Pillow does.
enum Resampler {
    /// Pixels of one pass's input or output: `width * height` pixels of `Access`'s layout.
    private struct Plane {
        let bytes: [UInt8]
        let width: Int
        let height: Int
    }

    static func resize(_ source: PixelBuffer, width: Int, height: Int, filter: ResamplingFilter) -> PixelBuffer {
        precondition(width > 0 && height > 0, "a resize needs a positive size")
        guard width != source.width || height != source.height else { return source }
        if filter == .nearest { return nearest(source, width: width, height: height) }
        let plane = Plane(bytes: source.bytes, width: source.width, height: source.height)
        let output: [UInt8]
        if source.isOpaque {
            let rows =
                width == source.width ? plane : pass(rowsOf: plane, to: width, filter, OpaquePixelAccess.self, OpaquePixelAccess.self)
            output =
                height == rows.height
                ? rows.bytes : pass(columnsOf: rows, to: height, filter, OpaquePixelAccess.self, OpaquePixelAccess.self).bytes
        } else if width == source.width {
            output = pass(columnsOf: plane, to: height, filter, StraightPixelAccess.self, StraightPixelAccess.self).bytes
        } else if height == source.height {
            output = pass(rowsOf: plane, to: width, filter, StraightPixelAccess.self, StraightPixelAccess.self).bytes
        } else {
            let rows = pass(rowsOf: plane, to: width, filter, StraightPixelAccess.self, Premultiplied16PixelAccess.self)
            output = pass(columnsOf: rows, to: height, filter, Premultiplied16PixelAccess.self, StraightPixelAccess.self).bytes
        }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
    }

    private static func pass<Input: PixelAccess, Output: PixelAccess>(
        rowsOf source: Plane, to width: Int, _ filter: ResamplingFilter, _ input: Input.Type, _ output: Output.Type
    ) -> Plane {
        let weights = ResamplingWeights(inputSize: source.width, outputSize: width, filter: filter)
        let bytes = ParallelRows.fill(rows: source.height, width: width * Output.bytesPerPixel / 4) { y, outputRow in
            // The source row read (and premultiplied) once into floats: a shrinking kernel reads
            // each source pixel several times (about 6 for Lanczos3 at a tenth), and premultiplying
            // at every read made translucent resizing 2.4 times slower than opaque.
            let line = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: source.width)
            defer { line.deallocate() }
            source.bytes.withUnsafeBytes { pixels in
                let sourceRow = pixels.baseAddress! + y * source.width * Input.bytesPerPixel
                for x in 0..<source.width { line[x] = Input.load(sourceRow + x * Input.bytesPerPixel) }
            }
            weights.withPointers { starts, counts, taps in
                for x in 0..<width {
                    let first = line + starts[x]
                    let row = taps + x * weights.stride
                    var sum = SIMD4<Float>(repeating: 0)
                    for tap in 0..<counts[x] { sum += first[tap] * row[tap] }
                    Output.store(sum, to: outputRow + x * Output.bytesPerPixel)
                }
            }
        }
        return Plane(bytes: bytes, width: width, height: source.height)
    }

    private static func pass<Input: PixelAccess, Output: PixelAccess>(
        columnsOf source: Plane, to height: Int, _ filter: ResamplingFilter, _ input: Input.Type, _ output: Output.Type
    ) -> Plane {
        let weights = ResamplingWeights(inputSize: source.height, outputSize: height, filter: filter)
        let width = source.width
        let bytes = ParallelRows.fill(rows: height, width: width * Output.bytesPerPixel / 4) { y, outputRow in
            // One row of sums, filled tap by tap: each source row is read front to back.
            let sums = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: width)
            defer { sums.deallocate() }
            sums.initialize(repeating: .zero, count: width)
            source.bytes.withUnsafeBytes { pixels in
                weights.withPointers { starts, counts, taps in
                    for tap in 0..<counts[y] {
                        let weight = taps[y * weights.stride + tap]
                        let sourceRow = pixels.baseAddress! + (starts[y] + tap) * width * Input.bytesPerPixel
                        for x in 0..<width {
                            sums[x] += Input.load(sourceRow + x * Input.bytesPerPixel) * weight
                        }
                    }
                }
            }
            for x in 0..<width { Output.store(sums[x], to: outputRow + x * Output.bytesPerPixel) }
        }
        return Plane(bytes: bytes, width: width, height: height)
    }

    /// Each output pixel takes the source pixel under its centre.
    private static func nearest(_ source: PixelBuffer, width: Int, height: Int) -> PixelBuffer {
        let columns = (0..<width).map { min(Int((Double($0) + 0.5) * Double(source.width) / Double(width)), source.width - 1) }
        var output = [UInt8](repeating: 0, count: width * height * 4)
        source.bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                for y in 0..<height {
                    let sourceY = min(Int((Double(y) + 0.5) * Double(source.height) / Double(height)), source.height - 1)
                    let sourceRow = sourceY * source.bytesPerRow
                    for x in 0..<width {
                        output.storeBytes(
                            of: input.loadUnaligned(fromByteOffset: sourceRow + columns[x] * 4, as: UInt32.self),
                            toByteOffset: (y * width + x) * 4, as: UInt32.self)
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
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
