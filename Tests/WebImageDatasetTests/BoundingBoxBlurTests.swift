import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

@testable import WebImageDataset

/// DataComp's face boxes blurred as img2dataset 1.47 blurs them: `blur_reference.py` runs
/// img2dataset's own `BoundingBoxBlurrer` (with albumentations and OpenCV) on the same pixels,
/// and ours must give the same bytes within a level.
@Suite("Face-box blur against img2dataset's BoundingBoxBlurrer", .serialized)
struct BoundingBoxBlurTests {
    /// A photo-like test picture: gradients, a checkerboard and a diagonal, opaque.
    static func picture(width: Int, height: Int) -> PixelBuffer {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let index = (y * width + x) * 4
                let checker: UInt8 = ((x / 6) + (y / 6)) % 2 == 0 ? 60 : 0
                bytes[index] = UInt8((x * 255) / max(width - 1, 1))
                bytes[index + 1] = UInt8((y * 255) / max(height - 1, 1)) &+ checker
                bytes[index + 2] = abs(x - y) % 40 < 3 ? 255 : UInt8((x * y) % 200)
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }

    /// img2dataset's result for `pixels` and `boxes`.
    static func reference(_ pixels: PixelBuffer, boxes: [[Double]]) async throws -> PixelBuffer {
        let directory = try TemporaryDirectory("blur")
        let input = directory.url.appendingPathComponent("in.png")
        let output = directory.url.appendingPathComponent("out.png")
        try CodersManager.shared.encode(Image(pixels: pixels), as: .png).write(to: input)
        let script = try #require(Bundle.module.url(forResource: "blur_reference", withExtension: "py"))
        let python = TestPython.command
        let boxes = String(decoding: try JSONSerialization.data(withJSONObject: boxes), as: UTF8.self)
        let process = try ChildProcess(python.executable, python.arguments + [script.path, input.path, boxes, output.path])
        try #require(
            try await process.waitForExit().status == 0,
            "blur_reference.py failed: the tests' Python needs img2dataset, albumentations and OpenCV (scripts/python-deps.sh)")
        return try CodersManager.shared.decode(try Data(contentsOf: output)).pixels
    }

    @Test(
        "the same bytes within a level: OpenCV's fixed 3, 5 and 7 tap kernels, larger Gaussians, boxes at the edges and overlapping, a box of nothing",
        arguments: [
            [[0.1, 0.2, 0.3, 0.35]],  // 32x18 px: 7 taps
            [[0.5, 0.5, 0.52, 0.53]],  // 3 px: 3 taps
            [[0.0, 0.0, 0.2, 0.2]],  // 5 taps, against the corner
            [[0.05, 0.1, 0.75, 0.9], [0.6, 0.5, 0.98, 1.0]],  // 112 px: a 25-tap Gaussian, overlapping boxes to the edge
            [[0.4, 0.4, 0.4, 0.4]],  // nothing to blur, but the kernel still runs
        ])
    func matchesImg2dataset(boxes: [[Double]]) async throws {
        let pixels = Self.picture(width: 160, height: 120)
        let ours = BoundingBoxBlur(boxes: boxes).apply(to: pixels)
        let theirs = try await Self.reference(pixels, boxes: boxes)
        #expect((theirs.width, theirs.height) == (160, 120))
        var largest = 0
        var differing = 0
        for index in 0..<(160 * 120) {
            for channel in 0..<3 {
                let difference = abs(Int(ours.bytes[index * 4 + channel]) - Int(theirs.bytes[index * 4 + channel]))
                largest = max(largest, difference)
                if difference > 0 { differing += 1 }
            }
        }
        #expect(largest <= 1, "largest difference \(largest) levels")
        #expect(differing <= 160 * 120 * 3 / 50, "\(differing) channel values differ by a level")
        #expect(ours != pixels || boxes == [[0.4, 0.4, 0.4, 0.4]], "the boxes changed the picture")
    }

    @Test("kernel sizes and weights as img2dataset and OpenCV make them")
    func kernels() {
        #expect(BoundingBoxBlur.taps(largestSide: 0) == 3 && BoundingBoxBlur.taps(largestSide: 20) == 5)
        #expect(BoundingBoxBlur.taps(largestSide: 21) == 7, "2 * ceil(2.1) + 1")
        #expect(BoundingBoxBlur.taps(largestSide: 112) == 25)
        let kernel = BoundingBoxBlur.kernel(taps: 25)
        #expect(abs(kernel.reduce(0, +) - 1) < 1e-6 && kernel[12] == kernel.max() && kernel[0] == kernel[24])
    }

    @Test("a box column's value: lists of four numbers, or that as JSON text (a CSV list); null blurs nothing; anything else is refused")
    func boxValues() throws {
        let box = JSONValue.array([.number(0.1), .integer(0), .number(0.5), .number(1)])
        #expect(try BoundingBoxBlur.boxes(in: .array([box])) == [[0.1, 0, 0.5, 1]])
        #expect(try BoundingBoxBlur.boxes(in: .string("[[0.1, 0, 0.5, 1]]")) == [[0.1, 0, 0.5, 1]])
        #expect(try BoundingBoxBlur.boxes(in: .null) == nil && BoundingBoxBlur.boxes(in: .string(" ")) == nil)
        #expect(try BoundingBoxBlur.boxes(in: .array([])) == [])
        #expect(throws: DatasetError.self) { try BoundingBoxBlur.boxes(in: .array([.array([.number(1)])])) }
        #expect(throws: DatasetError.self) { try BoundingBoxBlur.boxes(in: .string("faces")) }
    }
}
