/// For each output position along one axis: the first source pixel it reads, how many it reads,
/// and their normalised weights (padded to ``stride`` per position).
///
/// Shrinking widens the kernel by the scale factor so that every source pixel contributes
/// (area-correct, no aliasing); enlarging keeps the kernel at its natural width. Sample
/// positions are pixel centres, so an image keeps its alignment at any scale.
struct ResamplingWeights {
    let starts: [Int]
    let counts: [Int]
    let weights: [Float]
    let stride: Int

    init(inputSize: Int, outputSize: Int, filter: ResamplingFilter) {
        let scale = Double(inputSize) / Double(outputSize)
        let filterScale = max(scale, 1)
        let support = filter.support * filterScale
        let stride = Int((support * 2).rounded(.up)) + 2
        var starts = [Int](repeating: 0, count: outputSize)
        var counts = [Int](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * stride)
        for position in 0..<outputSize {
            let centre = (Double(position) + 0.5) * scale
            let first = max(Int(centre - support + 0.5), 0)
            let end = min(Int(centre + support + 0.5), inputSize)
            var taps: [Double] = (first..<end).map { filter.weight((Double($0) - centre + 0.5) / filterScale) }
            var total = taps.reduce(0, +)
            if total == 0 {
                // A nearest kernel can fall between two pixels when enlarging; take the one below.
                taps = (first..<end).map { $0 == min(Int(centre), inputSize - 1) ? 1 : 0 }
                total = 1
            }
            starts[position] = first
            counts[position] = taps.count
            for (tap, weight) in taps.enumerated() {
                weights[position * stride + tap] = Float(weight / total)
            }
        }
        self.starts = starts
        self.counts = counts
        self.weights = weights
        self.stride = stride
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
