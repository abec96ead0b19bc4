/// For each output position along one axis: the first source pixel it reads, how many it reads,
/// and their normalised weights (padded to ``stride`` per position).
///
/// Shrinking widens the kernel by the scale factor so that every source pixel contributes
/// (area-correct, no aliasing); enlarging keeps the kernel at its natural width. Sample
/// positions are pixel centres, so an image keeps its alignment at any scale.
struct ResamplingWeights {
    private(set) var starts: [Int]
    let counts: [Int]
    let weights: [Float]
    let stride: Int

    /// The weights for the output positions in `window` (all of `0..<outputSize` by default) of
    /// a resize from `inputSize` to `outputSize`: entry 0 is position `window.lowerBound`, so a
    /// resize that keeps only part of its output computes only that part.
    init(inputSize: Int, outputSize: Int, window: Range<Int>? = nil, filter: ResamplingFilter) {
        let window = window ?? 0..<outputSize
        self.init(
            inputSize: inputSize, scale: Double(inputSize) / Double(outputSize), offset: Double(window.lowerBound), count: window.count,
            filter: filter)
    }

    /// The weights for `count` output positions, position `i` centred on source coordinate
    /// `(offset + i + 0.5) * scale`: a resize whose output grid is not a whole window of whole
    /// pixels, such as a subsampled chroma plane, whose samples sit between the luma samples.
    init(inputSize: Int, scale: Double, offset: Double, count: Int, filter: ResamplingFilter) {
        let filterScale = max(scale, 1)
        let support = filter.support * filterScale
        let stride = Int((support * 2).rounded(.up)) + 2
        var starts = [Int](repeating: 0, count: count)
        var counts = [Int](repeating: 0, count: count)
        var weights = [Float](repeating: 0, count: count * stride)
        // One position's weights before they are normalised, reused: a position reads at most
        // `2 * support + 1` pixels, which `stride` covers.
        var taps = [Double](repeating: 0, count: stride)
        for index in 0..<count {
            let centre = (offset + Double(index) + 0.5) * scale
            // At least one source pixel, the nearest, even for a position at or past the edge
            // (the last chroma sample of an odd-sized plane).
            let first = min(max(Int(centre - support + 0.5), 0), inputSize - 1)
            let end = max(min(Int(centre + support + 0.5), inputSize), first + 1)
            var total = 0.0
            for tap in 0..<(end - first) {
                taps[tap] = filter.weight((Double(first + tap) - centre + 0.5) / filterScale)
                total += taps[tap]
            }
            if total == 0 {
                // A nearest kernel can fall between two pixels when enlarging; take the one below.
                for tap in 0..<(end - first) { taps[tap] = first + tap == min(Int(centre), inputSize - 1) ? 1 : 0 }
                total = 1
            }
            starts[index] = first
            counts[index] = end - first
            for tap in 0..<(end - first) {
                weights[index * stride + tap] = Float(taps[tap] / total)
            }
        }
        self.starts = starts
        self.counts = counts
        self.weights = weights
        self.stride = stride
    }

    /// The source position every output position copies, when each takes exactly one source
    /// pixel at weight 1 and they are consecutive (a resize at scale 1 from a whole pixel: a cut).
    var copiedFrom: Int? {
        var origin: Int?
        for index in 0..<count {
            var copied: Int?
            for tap in 0..<counts[index] where weights[index * stride + tap] != 0 {
                guard copied == nil, weights[index * stride + tap] == 1 else { return nil }
                copied = starts[index] + tap
            }
            guard let copied else { return nil }
            let start = origin ?? copied
            guard copied == start + index else { return nil }
            origin = start
        }
        return origin
    }

    /// The same weights read from a source that begins `offset` pixels in: every position's
    /// first pixel `offset` lower.
    func shifted(by offset: Int) -> ResamplingWeights {
        guard offset != 0 else { return self }
        var shifted = self
        shifted.starts = starts.map { $0 - offset }
        return shifted
    }

    /// How many output positions the tables hold.
    var count: Int { starts.count }

    /// The source pixels the positions read, together.
    var sourceRange: Range<Int> {
        guard let first = starts.first else { return 0..<0 }
        var end = 0
        for (start, taps) in zip(starts, counts) { end = max(end, start + taps) }
        return first..<max(first, end)
    }

    /// The three tables as pointers, for inner loops without bounds checks.
    func withPointers<Result>(_ body: (UnsafePointer<Int>, UnsafePointer<Int>, UnsafePointer<Float>) -> Result) -> Result {
        starts.withUnsafeBufferPointer { starts in
            counts.withUnsafeBufferPointer { counts in
                weights.withUnsafeBufferPointer { weights in
                    body(starts.baseAddress!, counts.baseAddress!, weights.baseAddress!)
                }
            }
        }
    }
}
