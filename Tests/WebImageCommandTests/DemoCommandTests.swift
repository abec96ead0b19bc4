import Foundation
import Testing
import WebImageTesting
import WebImageTestSupport

@Suite("webimage demo")
struct DemoCommandTests {
    @Test("the demo loads from the network, the disk and memory, coalesces 500 loads, asks the image proxy, and exits 0")
    func demo() async throws {
        let demo = try ChildProcess(ChildProcess.builtProduct("webimage"), ["demo"])
        let exit = try await demo.waitForExit()
        #expect(exit.status == 0 && !exit.signaled)
        let lines = demo.lines
        #expect(lines.filter { $0.hasPrefix("cold load") && $0.contains(" network ") }.count == 4)
        #expect(lines.filter { $0.hasPrefix("fresh manager") && $0.contains(" disk ") }.count == 4)
        #expect(lines.filter { $0.hasPrefix("again") && $0.contains(" memory ") }.count == 4)
        #expect(lines.contains { $0.hasPrefix("500 at once") && $0.contains("500 images, 1 origin request") })
        #expect(lines.contains { $0.hasPrefix("thumbnail") && $0.contains("16x12") })
        #expect(lines.contains { $0.hasPrefix("transform") && $0.contains("32x32") })
        #expect(lines.contains { $0.hasPrefix("progressive") && $0.contains("partial images") && !$0.contains(" 0 partial") })
        #expect(lines.contains { $0.hasPrefix("animated frames") && $0.contains("3 frames") })
        #expect(lines.contains { $0.hasPrefix("image proxy") && $0.contains(" network ") && $0.contains("webp 64x48") })
        #expect(lines.last == "7 requests reached the origin; everything else came from the caches.")
    }

    @Test("the shipped command links no part of the test kit")
    func noTestKit() throws {
        let binary = try Data(contentsOf: ChildProcess.builtProduct("webimage"))
        // Every Swift symbol of a module carries its mangled name: 15WebImageTesting.
        #expect(binary.range(of: Data("15WebImageTesting".utf8)) == nil)
        #expect(binary.range(of: Data("OriginServer".utf8)) == nil)
        #expect(binary.range(of: Data("DemoOrigin".utf8)) != nil)
    }
}
