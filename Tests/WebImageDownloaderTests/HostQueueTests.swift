import Foundation
import Testing
@testable import WebImageDownloader
import WebImageTestSupport

/// The per-host queue alone: limits, turns, rates and holds, with the time given as a value.
@Suite("HostQueue")
struct HostQueueTests {
    private var sequence = 0

    private mutating func transfer(_ url: String) -> DownloadTransfer {
        sequence += 1
        return DownloadTransfer(
            key: .init(url: URL(string: url)!, options: LoadRequestOptions()), options: LoadRequestOptions(), sequence: sequence)
    }

    private func drain(_ queue: inout HostQueue, now: ContinuousClock.Instant) -> [String] {
        var started: [String] = []
        while let next = queue.next(lifo: false, now: now).transfer { started.append(next.key.url.absoluteString) }
        return started
    }

    @Test("each host keeps to its limit, and a host with a long list does not starve the others")
    mutating func limitsAndTurns() {
        var queue = HostQueue(HostPoliteness(maximumConcurrentDownloadsPerHost: 2))
        let now = ContinuousClock.now
        for index in 0..<100 { queue.append(transfer("http://slow.test/\(index)"), priority: .normal, host: "slow.test") }
        for index in 0..<3 { queue.append(transfer("http://other.test:8080/\(index)"), priority: .normal, host: "other.test") }
        let started = drain(&queue, now: now)
        #expect(started.filter { $0.contains("slow.test") } == ["http://slow.test/0", "http://slow.test/1"])
        #expect(started.filter { $0.contains("other.test") }.count == 2, "the other host starts at once, up to its own limit")
        #expect(queue.next(lifo: false, now: now).wake == nil, "nothing but an end can free a slot")
        queue.ended(host: "other.test", now: now)
        #expect(queue.next(lifo: false, now: now).transfer?.key.url.absoluteString == "http://other.test:8080/2")
        queue.ended(host: "slow.test", now: now)
        #expect(queue.next(lifo: false, now: now).transfer?.key.url.absoluteString == "http://slow.test/2")
        #expect(queue.running("slow.test") == 2)
    }

    @Test("hosts take turns; a higher priority goes first whatever the host")
    mutating func turnsAndPriority() {
        var queue = HostQueue(HostPoliteness(maximumConcurrentDownloadsPerHost: 10))
        let now = ContinuousClock.now
        for index in 0..<3 {
            queue.append(transfer("http://a.test/\(index)"), priority: .normal, host: "a.test")
            queue.append(transfer("http://b.test/\(index)"), priority: .normal, host: "b.test")
        }
        queue.append(transfer("http://c.test/urgent"), priority: .high, host: "c.test")
        let order = drain(&queue, now: now).map { URL(string: $0)!.host! }
        #expect(order == ["c.test", "a.test", "b.test", "a.test", "b.test", "a.test", "b.test"])
    }

    @Test("a rate spaces a host's starts and says when the next may start; other hosts are not held")
    mutating func rate() {
        var queue = HostQueue(HostPoliteness(requestsPerSecond: 4))
        let now = ContinuousClock.now
        for index in 0..<3 { queue.append(transfer("http://a.test/\(index)"), priority: .normal, host: "a.test") }
        queue.append(transfer("http://b.test/0"), priority: .normal, host: "b.test")
        #expect(drain(&queue, now: now).count == 2, "one start per host now")
        let (none, wake) = queue.next(lifo: false, now: now)
        #expect(none == nil)
        #expect(wake == now + .milliseconds(250))
        #expect(queue.next(lifo: false, now: now + .milliseconds(249)).transfer == nil)
        #expect(queue.next(lifo: false, now: now + .milliseconds(250)).transfer?.key.url.path == "/1")
    }

    @Test("a hold keeps a host's waiting downloads until it is over, capped; without honoursRetryAfter it does nothing")
    mutating func hold() {
        var queue = HostQueue(HostPoliteness(maximumHold: .seconds(10)))
        let now = ContinuousClock.now
        queue.append(transfer("http://a.test/0"), priority: .normal, host: "a.test")
        queue.append(transfer("http://a.test/1"), priority: .normal, host: "a.test")
        queue.append(transfer("http://b.test/0"), priority: .normal, host: "b.test")
        #expect(queue.next(lifo: false, now: now).transfer?.key.url.host == "a.test")
        queue.hold("a.test", for: .seconds(3600), now: now)
        #expect(queue.next(lifo: false, now: now).transfer?.key.url.host == "b.test", "another host is not held")
        let (held, wake) = queue.next(lifo: false, now: now)
        #expect(held == nil)
        #expect(wake == now + .seconds(10), "the hold is capped")
        #expect(queue.next(lifo: false, now: now + .seconds(10)).transfer?.key.url.path == "/1")

        var ignoring = HostQueue(HostPoliteness(honoursRetryAfter: false))
        ignoring.append(transfer("http://a.test/0"), priority: .normal, host: "a.test")
        ignoring.hold("a.test", for: .seconds(60), now: now)
        #expect(ignoring.next(lifo: false, now: now).transfer != nil)
    }

    @Test("an idle host is forgotten; a removed download never starts")
    mutating func forgetting() {
        var queue = HostQueue(HostPoliteness())
        let now = ContinuousClock.now
        let only = transfer("http://a.test/0")
        queue.append(only, priority: .normal, host: "a.test")
        let removed = queue.remove(only, host: "a.test", now: now)
        #expect(removed)
        #expect(queue.isEmpty)
        #expect(queue.next(lifo: false, now: now).transfer == nil)
        #expect(queue.running("a.test") == 0)
    }
}
