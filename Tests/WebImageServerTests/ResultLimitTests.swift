import Foundation
import Testing
@testable import WebImageCodecs
@testable import WebImageServer
import WebImageTestSupport

/// Issue 36, item 1: one request must not be able to end the process. Each shape below made the
/// server ask for hundreds of gigabytes (Swift traps when an allocation fails) or for gigabytes
/// it did not need; now the plan keeps every size within the limits, the resize computes only
/// what a `fill` keeps, and every allocation of pixels is checked.
@Suite("Result limits")
struct ResultLimitTests {
    /// A `width` x `height` image whose pixel (x, y) has a colour of its own, translucent or not.
    static func pattern(_ width: Int, _ height: Int, translucent: Bool = false) -> Image {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                bytes += [UInt8((x * 37 + y * 11) % 256), UInt8((x * 5 + y * 53) % 256), UInt8((x * y) % 256)]
                bytes.append(translucent ? UInt8(40 + (x + y) % 200) : 255)
            }
        }
        return Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: bytes))
    }

    @Test("the checked allocation refuses overflowing and oversized buffers with a typed error")
    func checkedAllocation() throws {
        #expect(try PixelBuffer.byteCount(width: 100, height: 20) == 8000)
        #expect(try PixelBuffer.byteCount(width: 100, height: 20, bytesPerPixel: 1) == 2000)
        for (width, height) in [(Int.max, 2), (1 << 32, 1 << 32), (20001, 20000), (-1, 5)] {
            #expect(throws: WebImageError.self) { try PixelBuffer.byteCount(width: width, height: height) }
        }
        let small = Self.pattern(2, 2)
        // Each asked for 268 GB or more before, and the process ended.
        #expect(CanvasTransformer(width: 1_000_000, height: 1_000_000, x: 0, y: 0).transform(small, forKey: "") == nil)
        #expect(ResizingTransformer(width: 8192, height: 32_768_000).transform(small, forKey: "") == nil)
        #expect(RotationTransformer(degrees: 45).transform(small, forKey: "") != nil)
    }

    @Test(
        "a resize that keeps a window computes exactly that part of the whole resize",
        arguments: [false, true])
    func windowedResize(translucent: Bool) throws {
        let source = Self.pattern(37, 23, translucent: translucent)
        for (width, height, window) in [
            (100, 60, ResizeWindow(x: 10, y: 5, width: 30, height: 20)), (20, 9, ResizeWindow(x: 0, y: 3, width: 20, height: 5)),
            (37, 80, ResizeWindow(x: 4, y: 70, width: 33, height: 10)), (12, 23, ResizeWindow(x: 2, y: 0, width: 3, height: 23)),
        ] {
            let whole = try #require(ResizingTransformer(width: width, height: height).transform(source, forKey: ""))
            let cut = try #require(
                CroppingTransformer(
                    x: window.columns.lowerBound, y: window.rows.lowerBound, width: window.columns.count, height: window.rows.count
                ).transform(whole, forKey: ""))
            let windowed = try #require(
                ResizingTransformer(width: width, height: height, keeping: window).transform(source, forKey: ""))
            #expect(windowed.pixels == cut.pixels, "\(width)x\(height) keeping \(window)")
        }
    }

    @Test("a very tall image stretched wide is resized columns first, within one level of rows first")
    func columnsFirst() throws {
        // 1x5000 to 500x10: rows first would widen all 5000 rows to 500 (2.5 MP between the
        // passes); columns first makes 1x10 and then widens 10 rows.
        let tall = Self.pattern(1, 5000)
        let resized = try #require(ResizingTransformer(width: 500, height: 10).transform(tall, forKey: ""))
        let reference = try #require(ResizingTransformer(width: 1, height: 10).transform(tall, forKey: ""))
        #expect((resized.pixelWidth, resized.pixelHeight) == (500, 10))
        for y in 0..<10 {
            let expected = reference.pixels.pixel(x: 0, y: y)
            for x in [0, 250, 499] {
                let pixel = resized.pixels.pixel(x: x, y: y)
                #expect(abs(Int(pixel.red) - Int(expected.red)) <= 1 && abs(Int(pixel.green) - Int(expected.green)) <= 1)
            }
        }
    }

    /// The plan of `options` (imgproxy's syntax) for an upright `width` x `height` source.
    func plan(_ options: String, _ width: Int, _ height: Int, limits: ProcessingPlan.Limits = .init()) throws -> ProcessingPlan {
        try ProcessingPlan(
            options: try OptionsParser().parse(options.split(separator: "/")), sourceWidth: width, sourceHeight: height, limits: limits)
    }

    @Test(
        "every shape that ended the process gives a result within the limits",
        arguments: [
            ("pd:10000/dpr:100", 1, 1), ("rs:fit:8192:0:1", 1, 4000), ("mw:8192", 1, 4000), ("rs:fill:8192:1:1", 1, 4000),
            ("z:100/el:1", 200, 200), ("rs:fill:1000:100:1", 1, 400), ("rs:fit:8192:8192:1", 100, 100), ("mh:8192/mw:8192", 1, 1),
            ("pd:10000:0:0:0/dpr:100/rs:fit:80:80:1", 1, 1), ("rs:force:8192:8192:1/pd:10000", 3, 2),
        ])
    func planWithinLimits(options: String, width: Int, height: Int) throws {
        let limits = ProcessingPlan.Limits(maximumDimension: 8192, maximumPixels: 40_000_000)
        let plan = try plan(options, width, height, limits: limits)
        #expect(plan.resultWidth <= 8192 && plan.resultHeight <= 8192, "\(plan.resultWidth)x\(plan.resultHeight)")
        #expect(plan.resultWidth * plan.resultHeight <= 40_000_000)
        let kept = (plan.fill?.width ?? plan.scaledWidth, plan.fill?.height ?? plan.scaledHeight)
        #expect(kept.0 <= plan.resultWidth && kept.1 <= plan.resultHeight)
    }

    @Test("a result over the limits is scaled down as a whole, as imgproxy's limitScale does")
    func scaledDown() throws {
        // z:100 on 200x200 asks for 20000x20000; the dimension limit scales it to 8192.
        let zoomed = try plan("z:100/el:1", 200, 200)
        #expect((zoomed.resultWidth, zoomed.resultHeight) == (8192, 8192))
        // The padding scales with the image: 1x1 with 10000 px padding at dpr 100 keeps its shape.
        let padded = try plan("pd:10000/dpr:100", 1, 1)
        #expect(padded.resultWidth == padded.resultHeight && padded.resultWidth <= 8192 && padded.resultWidth > 8000)
        // The pixel limit: 8192x8192 is 67 MP; at 40 MP the side is 6324 at most.
        let square = try plan("rs:fit:8192:8192:1", 1000, 1000, limits: .init(maximumDimension: 8192, maximumPixels: 40_000_000))
        #expect(square.resultWidth == square.resultHeight && square.resultWidth * square.resultWidth <= 40_000_000)
        #expect(square.resultWidth > 6300)
        // Within the limits nothing changes.
        #expect(try plan("rs:fit:512:512", 2048, 1365).limitScale == 1)
    }

    @Test("a JPEG XL result's effort is lowered, then refused, by the encoder's memory budget")
    func jpegXLEffort() throws {
        // libjxl 0.7 took 5.7 GB for a 40 MP picture at effort 7 and 1.6 GB at 5 (cjxl, measured).
        #expect(try ImageProcessor.jpegXLEffort(pixels: 1_000_000) == 7)
        #expect(try ImageProcessor.jpegXLEffort(pixels: 3_000_000) == 7)
        #expect(try ImageProcessor.jpegXLEffort(pixels: 4_000_000) == 5)
        #expect(try ImageProcessor.jpegXLEffort(pixels: 13_000_000) == 5)
        #expect(throws: ProxyError.self) { try ImageProcessor.jpegXLEffort(pixels: 14_000_000) }
        #expect(throws: ProxyError.self) { try ImageProcessor.jpegXLEffort(pixels: 40_000_000) }
    }

    @Test("a smart fill from a scaled image over the pixel limit is refused, not made")
    func smartFillRefused() throws {
        #expect(throws: ProxyError.self) { try plan("rs:fill:1000:100:1/g:sm", 1, 400) }
        #expect(try plan("rs:fill:1000:100:1", 1, 400).fill?.height == 100)
    }

    @Test(
        "the processor turns each shape into a bounded result",
        arguments: [
            ("rs:fit:8192:0:1", 1, 4000), ("mw:8192", 1, 4000), ("rs:fill:8192:1:1", 1, 4000), ("rs:fill:1000:100:1", 1, 400),
            ("pd:10000/dpr:100", 1, 1), ("z:100/el:1/pd:5", 20, 20),
        ])
    func processed(options: String, width: Int, height: Int) throws {
        let source = try CodersManager.shared.encode(Self.pattern(width, height), as: .png)
        let limits = ProcessingPlan.Limits(maximumDimension: 2048, maximumPixels: 2_000_000)
        let processor = ImageProcessor(
            coders: .shared, maximumSourcePixels: 50_000_000, maximumAnimationFrames: 100, defaultQuality: 80, resultLimits: limits)
        let result = try processor.process(source, options: try OptionsParser().parse(options.split(separator: "/")), format: .png)
        let header = try ImageHeader(data: result)
        #expect(
            header.width <= 2048 && header.height <= 2048 && header.width * header.height <= 2_000_000, "\(header.width)x\(header.height)")
    }
}
