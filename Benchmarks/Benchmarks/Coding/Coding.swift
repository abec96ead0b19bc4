import Benchmark
import WebImage

/// 1 MiB of 64-byte records, each starting with the signature of a format (or of none), as a
/// cache or a proxy sees them: the mix a sniffer runs over.
private let mixedHeaders: [UInt8] = {
    let signatures: [[UInt8]] = [
        [0xFF, 0xD8, 0xFF, 0xE0], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array("GIF89a".utf8),
        Array("RIFF\u{10}\0\0\0WEBPVP8 ".utf8), Array("II*\0".utf8), Array("%PDF-1.7".utf8),
        [0, 0, 0, 0x1C] + Array("ftypmif1\0\0\0\0mif1avif".utf8), [0, 0, 0, 0x18] + Array("ftypheic\0\0\0\0mif1heic".utf8),
        Array("BM6\0".utf8), [0, 0, 1, 0, 1, 0], [0xFF, 0x0A], Array("<html><body>not an image</body></html>".utf8),
        Array("<svg xmlns='http://www.w3.org/2000/svg'></svg>".utf8),
    ]
    let record = 64
    var bytes = [UInt8](repeating: 0x20, count: 1 << 20)
    for (index, start) in stride(from: 0, to: bytes.count, by: record).enumerated() {
        let signature = signatures[index % signatures.count]
        bytes.replaceSubrange(start..<start + signature.count, with: signature)
    }
    return bytes
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark(
        "ImageFormat sniffing, 1 MiB of mixed 64-byte headers",
        configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(5))
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            mixedHeaders.withUnsafeBytes { bytes in
                var recognised = 0
                for start in stride(from: 0, to: bytes.count, by: 64) {
                    let record = UnsafeRawBufferPointer(rebasing: bytes[start..<start + 64])
                    if ImageFormat(sniffing: record) != nil { recognised += 1 }
                }
                blackHole(recognised)
            }
        }
    }
}
