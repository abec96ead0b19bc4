/// Exact rearrangements of pixels: no resampling, so no value changes.
extension PixelBuffer {
    /// A quarter turn, counting counter-clockwise (as angles do); any integer works.
    func rotated(quarterTurns: Int) -> PixelBuffer {
        switch ((quarterTurns % 4) + 4) % 4 {
        case 1: return remapped(width: height, height: width) { x, y in (width - 1 - y, x) }
        case 2: return remapped(width: width, height: height) { x, y in (width - 1 - x, height - 1 - y) }
        case 3: return remapped(width: height, height: width) { x, y in (y, height - 1 - x) }
        default: return self
        }
    }

    /// Mirrored left to right and/or top to bottom.
    func flipped(horizontally: Bool, vertically: Bool) -> PixelBuffer {
        guard horizontally || vertically else { return self }
        return remapped(width: width, height: height) { x, y in
            (horizontally ? width - 1 - x : x, vertically ? height - 1 - y : y)
        }
    }

    /// Mirrored along the main diagonal (rows become columns), in tiles that stay in cache.
    func transposed() -> PixelBuffer {
        let tile = 32
        var output = [UInt8](repeating: 0, count: bytes.count)
        bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                let source = input.bindMemory(to: UInt32.self)
                let target = output.bindMemory(to: UInt32.self)
                for tileY in stride(from: 0, to: height, by: tile) {
                    for tileX in stride(from: 0, to: width, by: tile) {
                        for y in tileY..<min(tileY + tile, height) {
                            for x in tileX..<min(tileX + tile, width) { target[x * height + y] = source[y * width + x] }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: height, height: width, straightRGBA: output)
    }

    /// The pixels inside a rectangle that lies within the buffer.
    func cropped(x: Int, y: Int, width: Int, height: Int) -> PixelBuffer {
        precondition(x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= self.width && y + height <= self.height)
        var output = [UInt8]()
        output.reserveCapacity(width * height * 4)
        for row in y..<(y + height) {
            let start = row * bytesPerRow + x * 4
            output.append(contentsOf: bytes[start..<start + width * 4])
        }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
    }

    /// The pixels shown upright for an EXIF orientation.
    func applying(_ orientation: ExifOrientation) -> PixelBuffer {
        switch orientation {
        case .up: self
        case .upMirrored: flipped(horizontally: true, vertically: false)
        case .down: rotated(quarterTurns: 2)
        case .downMirrored: flipped(horizontally: false, vertically: true)
        case .leftMirrored: transposed()
        case .right: rotated(quarterTurns: -1)
        case .rightMirrored: rotated(quarterTurns: 1).flipped(horizontally: true, vertically: false)
        case .left: rotated(quarterTurns: 1)
        }
    }

    /// A buffer of the given size whose pixel (x, y) is this buffer's pixel `source(x, y)`.
    private func remapped(width: Int, height: Int, source: (Int, Int) -> (Int, Int)) -> PixelBuffer {
        var output = [UInt8](repeating: 0, count: width * height * 4)
        bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                for y in 0..<height {
                    for x in 0..<width {
                        let (sourceX, sourceY) = source(x, y)
                        let pixel = input.loadUnaligned(fromByteOffset: sourceY * bytesPerRow + sourceX * 4, as: UInt32.self)
                        output.storeBytes(of: pixel, toByteOffset: (y * width + x) * 4, as: UInt32.self)
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
    }
}
