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
        isHighBitDepth ? transposed(as: UInt64.self) : transposed(as: UInt32.self)
    }

    /// ``transposed()`` moving whole pixels of `Pixel`'s size.
    private func transposed<Pixel: FixedWidthInteger>(as pixel: Pixel.Type) -> PixelBuffer {
        let tile = 32
        var output = [UInt8](repeating: 0, count: bytes.count)
        bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                let source = input.bindMemory(to: Pixel.self)
                let target = output.bindMemory(to: Pixel.self)
                for tileY in stride(from: 0, to: height, by: tile) {
                    for tileX in stride(from: 0, to: width, by: tile) {
                        for y in tileY..<min(tileY + tile, height) {
                            for x in tileX..<min(tileX + tile, width) { target[x * height + y] = source[y * width + x] }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: height, height: width, bitsPerSample: bitsPerSample, bytes: output)
    }

    /// The pixels inside a rectangle that lies within the buffer.
    func cropped(x: Int, y: Int, width: Int, height: Int) -> PixelBuffer {
        precondition(x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= self.width && y + height <= self.height)
        var output = [UInt8]()
        output.reserveCapacity(width * height * bytesPerPixel)
        for row in y..<(y + height) {
            let start = row * bytesPerRow + x * bytesPerPixel
            output.append(contentsOf: bytes[start..<start + width * bytesPerPixel])
        }
        return PixelBuffer(width: width, height: height, bitsPerSample: bitsPerSample, bytes: output)
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
        isHighBitDepth
            ? remapped(width: width, height: height, as: UInt64.self, source: source)
            : remapped(width: width, height: height, as: UInt32.self, source: source)
    }

    /// ``remapped(width:height:source:)`` moving whole pixels of `Pixel`'s size.
    private func remapped<Pixel: FixedWidthInteger>(width: Int, height: Int, as pixel: Pixel.Type, source: (Int, Int) -> (Int, Int))
        -> PixelBuffer
    {
        let size = MemoryLayout<Pixel>.size
        var output = [UInt8](repeating: 0, count: width * height * size)
        bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                for y in 0..<height {
                    for x in 0..<width {
                        let (sourceX, sourceY) = source(x, y)
                        let pixel = input.loadUnaligned(fromByteOffset: sourceY * bytesPerRow + sourceX * size, as: Pixel.self)
                        output.storeBytes(of: pixel, toByteOffset: (y * width + x) * size, as: Pixel.self)
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, bitsPerSample: bitsPerSample, bytes: output)
    }
}
