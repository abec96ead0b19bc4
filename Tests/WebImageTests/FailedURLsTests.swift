import Foundation
import Synchronization
import Testing
@testable import WebImage
import WebImageTestSupport

/// Issue 36, item 6: the failed-URL list grew without bound and never let a URL go.
@Suite("Failed URLs")
struct FailedURLsTests {
    /// A clock the test moves by hand, in nanoseconds.
    final class ManualClock: Sendable {
        let nanoseconds = Atomic<UInt64>(1_000)
        func advance(by duration: Duration) { nanoseconds.add(MonotonicClock.nanoseconds(duration), ordering: .relaxed) }
    }

    @Test("at most its capacity: the oldest entry leaves for a new one; adding again starts the age over")
    func bounded() {
        let clock = ManualClock()
        let list = FailedURLs(capacity: 3, lifetime: .seconds(60)) { clock.nanoseconds.load(ordering: .relaxed) }
        let urls = (0..<5).map { URL(string: "https://a.test/\($0).png")! }
        for url in urls.prefix(3) { list.insert(url) }
        list.insert(urls[0])  // again: now the newest
        list.insert(urls[3])
        #expect(list.count == 3)
        #expect(list.contains(urls[0]) && !list.contains(urls[1]) && list.contains(urls[2]) && list.contains(urls[3]))
        for index in 0..<5000 { list.insert(URL(string: "https://b.test/\(index)")!) }
        #expect(list.count == 3, "5,000 failures keep three entries")
    }

    @Test("an entry older than the lifetime no longer blocks")
    func ages() {
        let clock = ManualClock()
        let list = FailedURLs(capacity: 10, lifetime: .seconds(60)) { clock.nanoseconds.load(ordering: .relaxed) }
        let url = URL(string: "https://a.test/x.png")!
        list.insert(url)
        clock.advance(by: .seconds(59))
        #expect(list.contains(url))
        clock.advance(by: .seconds(2))
        #expect(!list.contains(url))
        #expect(list.count == 0)
    }

    @Test("the manager's list takes its bounds from the configuration")
    func configured() {
        var configuration = ImageManagerConfiguration()
        configuration.failedURLCapacity = 7
        configuration.failedURLLifetime = .seconds(5)
        let manager = ImageManager(configuration: configuration)
        #expect(manager.failedURLs.capacity == 7 && manager.failedURLs.lifetime == .seconds(5))
    }
}

/// Issue 36, item 6: a long animation over the pixel limit was refused as too large, for good.
@Suite("Animation frame budget")
struct AnimationFrameBudgetTests {
    @Test("an animation over the pixel limit keeps the first frames that fit, with a warning; one frame over it is refused")
    func keepsTheFirstFrames() throws {
        let data = try Fixture.data("animated.gif")
        let whole = try CodersManager.shared.decode(data)
        let framePixels = whole.pixelWidth * whole.pixelHeight
        #expect(whole.frames.count > 2)
        let twoFrames = DecodeOptions(limits: DecodeLimits(maximumPixelCount: framePixels * 2 + framePixels / 2))
        let kept = try CodersManager.shared.decode(data, options: twoFrames)
        #expect(kept.frames.count == 2)
        #expect(kept.frames.map(\.pixels) == whole.frames.prefix(2).map(\.pixels))
        #expect(kept.warnings.contains { $0.contains("kept the first 2 of \(whole.frames.count) frames") }, "\(kept.warnings)")
        let lessThanOne = DecodeOptions(limits: DecodeLimits(maximumPixelCount: framePixels - 1))
        #expect(throws: WebImageError(.tooLarge)) { try CodersManager.shared.decode(data, options: lessThanOne) }
    }
}
