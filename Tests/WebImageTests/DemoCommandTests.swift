import Testing
import WebImageTestSupport

@Suite("webimage demo")
struct DemoCommandTests {
    @Test("the demo loads every image from the network once, then from disk and memory, and exits 0")
    func demo() async throws {
        let demo = try ChildProcess(ChildProcess.builtProduct("webimage"), ["demo"])
        let exit = try await demo.waitForExit()
        #expect(exit.status == 0 && !exit.signaled)
        let rows = demo.lines.filter { $0.hasPrefix("/") }
        #expect(rows.count == 15)
        #expect(rows.filter { $0.contains(" disk ") }.count == 5, "every sample decodes, so every sample is cached")
        #expect(rows.filter { $0.contains(" memory ") }.count == 5)
        #expect(demo.lines.last == "5 requests reached the origin; the rest came from the disk or memory cache.")
    }
}
