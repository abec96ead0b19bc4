import Foundation
import Testing
import WebImageCore
import WebImageTesting
@testable import WebImageDownloader
import WebImageTestSupport

/// The crawler's resolver: answers and failures kept for their lifetimes on a clock of the test's
/// own, one upstream lookup per name however many wait, names looked up side by side; and a
/// downloader that resolves names itself (through the guard, without a policy) using it.
@Suite("Caching host resolver")
struct CachingHostResolverTests {
    /// An upstream resolver that says when a lookup starts and answers only when told, so that
    /// the tests order events without a clock.
    final class GatedResolver: HostResolver {
        let started: AsyncStream<String>
        private let startedContinuation: AsyncStream<String>.Continuation
        private let gates = Locked<[String: [CheckedContinuation<Void, Never>]]>([:])
        private let opened = Locked<Set<String>>([])
        let calls = Locked<[String: Int]>([:])
        let answers: [String: [IPAddress]]

        init(_ answers: [String: [IPAddress]]) {
            self.answers = answers
            (started, startedContinuation) = AsyncStream.makeStream()
        }

        func addresses(of host: String) async throws -> [IPAddress] {
            calls.withLock { $0[host, default: 0] += 1 }
            startedContinuation.yield(host)
            await withCheckedContinuation { continuation in
                let open = opened.withLock { $0.contains(host) }
                if open { continuation.resume() } else { gates.withLock { $0[host, default: []].append(continuation) } }
            }
            guard let addresses = answers[host] else { throw HostResolutionError(host: host, reason: "no such name") }
            return addresses
        }

        /// Lets every lookup of `host`, waiting or to come, answer.
        func open(_ host: String) {
            opened.withLock { _ = $0.insert(host) }
            for waiter in gates.withLock({ $0.removeValue(forKey: host) ?? [] }) { waiter.resume() }
        }

        func count(_ host: String) -> Int { calls.withLock { $0[host] ?? 0 } }
    }

    /// A clock the test moves.
    final class TestClock: Sendable {
        private let offset = Locked<Duration>(.zero)
        private let start = ContinuousClock.now
        var now: @Sendable () -> ContinuousClock.Instant { { [self] in start + offset.withLock { $0 } } }
        func advance(_ by: Duration) { offset.withLock { $0 += by } }
    }

    static let one = IPAddress("192.0.2.1")!
    static let two = IPAddress("192.0.2.2")!

    @Test("many waiters for a name make one lookup; another name is looked up meanwhile; the answer is kept for its lifetime, any case")
    func coalescesAndKeeps() async throws {
        let upstream = GatedResolver(["a.test": [Self.one], "b.test": [Self.two]])
        let clock = TestClock()
        let resolver = CachingHostResolver(
            upstream: upstream, lifetime: .seconds(300), failureLifetime: .seconds(60), capacity: 100, now: clock.now)
        var started = upstream.started.makeAsyncIterator()
        try await withThrowingTaskGroup(of: [IPAddress].self) { group in
            for _ in 0..<10 { group.addTask { try await resolver.addresses(of: "a.test") } }
            #expect(await started.next() == "a.test")
            group.addTask { try await resolver.addresses(of: "b.test") }
            // b's lookup starts while a's is still waiting for its answer: names do not queue.
            #expect(await started.next() == "b.test")
            upstream.open("a.test")
            upstream.open("b.test")
            var answers: [[IPAddress]] = []
            for try await answer in group { answers.append(answer) }
            #expect(answers.filter { $0 == [Self.one] }.count == 10 && answers.contains([Self.two]))
        }
        #expect(upstream.count("a.test") == 1, "ten waiters, one lookup")
        #expect(try await resolver.addresses(of: "A.Test") == [Self.one])
        clock.advance(.seconds(299))
        #expect(try await resolver.addresses(of: "a.test") == [Self.one])
        #expect(upstream.count("a.test") == 1, "kept for its lifetime")
        clock.advance(.seconds(2))
        #expect(try await resolver.addresses(of: "a.test") == [Self.one])
        #expect(upstream.count("a.test") == 2, "asked again once it expired")
    }

    @Test("a failure is kept for the failure lifetime, then the name is asked again")
    func keepsFailures() async throws {
        let upstream = GatedResolver([:])
        upstream.open("dead.test")
        let clock = TestClock()
        let resolver = CachingHostResolver(
            upstream: upstream, lifetime: .seconds(300), failureLifetime: .seconds(60), capacity: 100, now: clock.now)
        for _ in 0..<3 {
            await #expect(throws: HostResolutionError.self) { try await resolver.addresses(of: "dead.test") }
        }
        #expect(upstream.count("dead.test") == 1)
        clock.advance(.seconds(61))
        await #expect(throws: HostResolutionError.self) { try await resolver.addresses(of: "dead.test") }
        #expect(upstream.count("dead.test") == 2)
    }

    @Test("a full table drops expired answers first, then every answer; never more names than its capacity")
    func staysWithinCapacity() async throws {
        let names = ["a.test", "b.test", "c.test", "d.test"]
        let upstream = GatedResolver(Dictionary(uniqueKeysWithValues: names.map { ($0, [Self.one]) }))
        names.forEach(upstream.open)
        let clock = TestClock()
        let resolver = CachingHostResolver(
            upstream: upstream, lifetime: .seconds(10), failureLifetime: .seconds(10), capacity: 2, now: clock.now)
        _ = try await resolver.addresses(of: "a.test")
        clock.advance(.seconds(11))
        _ = try await resolver.addresses(of: "b.test")
        _ = try await resolver.addresses(of: "c.test")  // full: a has expired and goes
        _ = try await resolver.addresses(of: "b.test")
        #expect(upstream.count("b.test") == 1, "b survived: only the expired answer was dropped")
        _ = try await resolver.addresses(of: "d.test")  // full of live answers: all go
        _ = try await resolver.addresses(of: "b.test")
        #expect(upstream.count("b.test") == 2)
    }

    @Test("a downloader that resolves names itself uses its resolver without an address policy: loopback allowed, each name looked up once")
    func downloaderResolvesNames() async throws {
        let png = try Fixture.data("gradient-rgba.png")
        let upstream = GatedResolver(["images.test": [IPAddress("127.0.0.1")!]])
        upstream.open("images.test")
        var configuration = ImageDownloaderConfiguration(
            hostResolver: CachingHostResolver(upstream: upstream), retryPolicy: .none)
        configuration.resolvesHostNames = true
        try await withDownloader(configuration) { origin, downloader in
            for index in 0..<4 { origin.route("/\(index).png", .ok([UInt8](png), contentType: "image/png")) }
            // Four at once: more than one connection, each needing the name.
            try await withThrowingTaskGroup(of: Data.self) { group in
                for index in 0..<4 {
                    group.addTask { try await downloader.loadData(URL(string: "http://images.test:\(origin.port)/\(index).png")!).data }
                }
                for try await data in group { #expect(data == png) }
            }
        }
        // `images.test` resolves nowhere but in this resolver: the loads show it was used.
        #expect(upstream.count("images.test") == 1)
    }
}
