import CWebImageCodecs

extension JPEGPlanarResize {
    /// Where a JPEG's blocks fall in its planes at one DCT scale: the whole planes' sizes, and
    /// its iMCUs (`chromaStep` blocks each way, the JPEG's own unit of decoding) in scaled luma
    /// samples. A resize reads only part of the planes (a crop's middle, and never past its
    /// filter's reach), and libjpeg can inverse-transform only some columns of iMCUs and stop
    /// after the last row needed: ``window(reading:)`` is that part, ``decode(_:window:passes:)``
    /// decodes it.
    struct BlockGeometry {
        let luma: (width: Int, height: Int)
        let chroma: (width: Int, height: Int)
        /// A block's size at the scale, in samples (the scale in eighths).
        let block: Int
        let chromaStep: (x: Int, y: Int)
        /// The image's iMCUs across and down.
        let columns: Int
        let rows: Int

        init(source: (width: Int, height: Int), eighths: Int, chromaStep: (x: Int, y: Int)) {
            luma = ((source.width * eighths + 7) / 8, (source.height * eighths + 7) / 8)
            chroma = ((luma.width + chromaStep.x - 1) / chromaStep.x, (luma.height + chromaStep.y - 1) / chromaStep.y)
            (block, self.chromaStep) = (eighths, chromaStep)
            columns = (source.width + 8 * chromaStep.x - 1) / (8 * chromaStep.x)
            rows = (source.height + 8 * chromaStep.y - 1) / (8 * chromaStep.y)
        }

        /// An iMCU in scaled luma samples.
        private var unit: (width: Int, height: Int) { (chromaStep.x * block, chromaStep.y * block) }

        var wholeImage: cwi_jpeg_window {
            cwi_jpeg_window(first_column: 0, last_column: UInt32(columns - 1), first_row: 0, last_row: UInt32(rows - 1))
        }

        /// The iMCUs holding every sample `passes` read, luma and chroma.
        func window(reading passes: Passes) -> cwi_jpeg_window {
            func span(_ luma: Range<Int>, _ chroma: Range<Int>, step: Int, unit: Int, count: Int) -> (first: UInt32, last: UInt32) {
                let low = min(luma.lowerBound, chroma.lowerBound * step)
                let high = max(luma.upperBound, chroma.upperBound * step, low + 1)
                return (UInt32(low / unit), UInt32(min(count - 1, (high - 1) / unit)))
            }
            let across = span(
                passes.lumaColumns.sourceRange, passes.chromaColumns.sourceRange, step: chromaStep.x, unit: unit.width, count: columns)
            let down = span(passes.lumaRows.sourceRange, passes.chromaRows.sourceRange, step: chromaStep.y, unit: unit.height, count: rows)
            return cwi_jpeg_window(first_column: across.first, last_column: across.last, first_row: down.first, last_row: down.last)
        }

        enum Outcome {
            case decoded(Planes)
            /// The file has several scans: decode it whole.
            case wholeImageNeeded
            /// libjpeg warned of damage, or cannot decode it.
            case declined
        }

        /// The planes of `window`'s iMCUs, each starting at the window's top-left.
        func decode(_ bytes: UnsafeRawBufferPointer, window: cwi_jpeg_window, passes: Passes) -> Outcome {
            let count = (columns: Int(window.last_column - window.first_column) + 1, rows: Int(window.last_row - window.first_row) + 1)
            let first = (column: Int(window.first_column), row: Int(window.first_row))
            var luma = Plane(
                origin: (first.column * unit.width, first.row * unit.height), extent: luma, stride: count.columns * unit.width,
                rows: count.rows * unit.height)
            func chromaPlane() -> Plane {
                Plane(
                    origin: (first.column * block, first.row * block), extent: chroma, stride: count.columns * block,
                    rows: count.rows * block)
            }
            var (blue, red) = (chromaPlane(), chromaPlane())
            var window = window
            var strides = [luma.stride, blue.stride, red.stride]
            var lengths = [luma.bytes.count, blue.bytes.count, red.bytes.count]
            var message = [CChar](repeating: 0, count: 200)
            let status = luma.bytes.withUnsafeMutableBufferPointer { luma in
                blue.bytes.withUnsafeMutableBufferPointer { blue in
                    red.bytes.withUnsafeMutableBufferPointer { red in
                        var planes = [luma.baseAddress, blue.baseAddress, red.baseAddress]
                        return cwi_jpeg_decode_planes(
                            bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, UInt32(block), &window, &planes,
                            &strides, &lengths, 0, &message)
                    }
                }
            }
            switch status {
            case 0: return .decoded(Planes(luma: luma, blue: blue, red: red, chromaStep: chromaStep, passes: passes))
            case 1: return .wholeImageNeeded
            default: return .declined
            }
        }
    }
}
