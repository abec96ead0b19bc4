import Foundation

/// A Gaussian blur approximated by three extended box blurs per axis (Gwosdek et al., 2011):
/// the cost per pixel does not depend on the radius, and the result is within a level or two of
/// a true Gaussian of the same standard deviation. Edges repeat the border pixel.
enum BoxBlur {
    static let passes = 3

    /// Blurs pixels with a Gaussian of standard deviation `sigma` pixels, premultiplied while
    /// blurred when they have transparency; 16-bit pixels stay 16-bit.
    static func blur(_ source: PixelBuffer, sigma: Double) -> PixelBuffer {
        guard sigma > 0, source.width > 0, source.height > 0 else { return source }
        let box = ExtendedBox(sigma: sigma, passes: passes)
        switch (source.isHighBitDepth, source.isOpaque) {
        case (false, true): return blur(source, box: box, access: OpaquePixelAccess.self)
        case (false, false): return blur(source, box: box, access: StraightPixelAccess.self)
        case (true, true): return blur(source, box: box, access: Opaque16PixelAccess.self)
        case (true, false): return blur(source, box: box, access: Straight16PixelAccess.self)
        }
    }

    private static func blur<Access: PixelAccess>(_ source: PixelBuffer, box: ExtendedBox, access: Access.Type) -> PixelBuffer {
        blurRows(blurRows(source, box: box, access: access).transposed(), box: box, access: access).transposed()
    }

    /// The box of radius `whole + fraction`: full weight within `whole`, `fraction` weight one
    /// pixel further, so that `passes` of it have the Gaussian's variance exactly.
    struct ExtendedBox {
        let whole: Int
        let fraction: Float

        init(sigma: Double, passes: Int) {
            let variance = sigma * sigma / Double(passes)
            let idealWidth = (12 * variance + 1).squareRoot()
            let whole = Int(((idealWidth - 1) / 2).rounded(.down))
            let l = Double(whole)
            let fraction = (2 * l + 1) * (l * (l + 1) - 3 * variance) / (6 * (variance - (l + 1) * (l + 1)))
            self.whole = whole
            self.fraction = Float(fraction)
        }
    }

    private static func blurRows<Access: PixelAccess>(_ source: PixelBuffer, box: ExtendedBox, access: Access.Type) -> PixelBuffer {
        let width = source.width
        let pad = box.whole + 1
        let size = Access.bytesPerPixel
        let output = ParallelRows.fill(rows: source.height, width: width * size / 4) { y, outputRow in
            // Lines padded with copies of their end pixels, so the running sum needs no bounds checks.
            var line = [SIMD4<Float>](repeating: .zero, count: width + 2 * pad)
            var scratch = line
            source.bytes.withUnsafeBytes { input in
                for x in 0..<width { line[pad + x] = Access.load(input.baseAddress! + (y * width + x) * size) }
            }
            for _ in 0..<passes {
                padEnds(&line, pad: pad, count: width)
                blurLine(line, into: &scratch, box: box, count: width)
                swap(&line, &scratch)
            }
            for x in 0..<width { Access.store(line[pad + x], to: outputRow + x * size) }
        }
        return PixelBuffer(width: width, height: source.height, bitsPerSample: source.bitsPerSample, bytes: output)
    }

    private static func padEnds(_ line: inout [SIMD4<Float>], pad: Int, count: Int) {
        let first = line[pad]
        let last = line[pad + count - 1]
        for index in 0..<pad {
            line[index] = first
            line[pad + count + index] = last
        }
    }

    /// One pass of the extended box along a padded line, with a running sum.
    private static func blurLine(_ line: [SIMD4<Float>], into output: inout [SIMD4<Float>], box: ExtendedBox, count: Int) {
        let pad = box.whole + 1
        let scale = 1 / (Float(2 * box.whole + 1) + 2 * box.fraction)
        let fraction = box.fraction
        line.withUnsafeBufferPointer { line in
            output.withUnsafeMutableBufferPointer { output in
                var sum = SIMD4<Float>.zero
                for index in (pad - box.whole)...(pad + box.whole) { sum += line[index] }
                for index in pad..<(pad + count) {
                    let edges = line[index - box.whole - 1] + line[index + box.whole + 1]
                    output[index] = (sum + edges * fraction) * scale
                    sum += line[index + box.whole + 1] - line[index - box.whole]
                }
            }
        }
    }
}
