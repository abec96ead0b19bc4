import WebImage

/// What `/status` shows over time, from the same proxy requests `/metrics` counts: answers per
/// second and by status class over the last minutes, latency percentiles, and the slowest
/// requests. Totals are not kept here; the page reads them from the metrics registry.
///
/// Everything is bounded: a slot per second for ``window`` seconds, the latencies of the last
/// ``latencySamples`` requests, and the ``slowestKept`` slowest requests. Time is given by the
/// caller (an offset from the board's start), so tests move it without waiting.
final class StatusBoard: Sendable {
    /// Seconds of history: five minutes.
    static let window = 300
    /// Latencies kept for the percentiles.
    static let latencySamples = 4096
    /// Slow requests listed.
    static let slowestKept = 10

    /// One answered request.
    struct Entry: Sendable, Equatable {
        var status: Int
        var milliseconds: Double
        /// The path without its signature segment.
        var path: String
        var bytes: Int
        /// Seconds since the board started, when it was answered.
        var second: Int
    }

    /// Answers in one second of history, by status class (index 0 for 1xx, 4 for 5xx).
    struct Second: Sendable, Equatable {
        var second = -1
        var classes = [Int](repeating: 0, count: 5)
    }

    /// The figures of a moment.
    struct Snapshot: Sendable, Equatable {
        /// Answers per second over the last minute and the last five.
        var perSecondLastMinute: Double
        var perSecondLastFiveMinutes: Double
        /// Answers by status class per minute, the current minute first (up to five).
        var minutes: [[Int]]
        /// Latency percentiles in milliseconds over the kept samples of the last five minutes.
        var p50: Double?
        var p95: Double?
        var p99: Double?
        /// The slowest requests of the last five minutes, slowest first.
        var slowest: [Entry]
    }

    private struct State {
        var seconds = [Second](repeating: Second(), count: StatusBoard.window)
        var latencies: [(second: Int, milliseconds: Double)] = []
        var nextLatency = 0
        var slowest: [Entry] = []
    }

    private let state = Locked(State())

    /// Records an answered request; its path (as text) is kept only if it is among the slowest.
    func record(status: Int, milliseconds: Double, path: Substring, bytes: Int, second: Int) {
        state.withLock { state in
            let slot = second % Self.window
            if state.seconds[slot].second != second { state.seconds[slot] = Second(second: second) }
            state.seconds[slot].classes[min(max(status / 100 - 1, 0), 4)] += 1
            if state.latencies.count < Self.latencySamples {
                state.latencies.append((second, milliseconds))
            } else {
                state.latencies[state.nextLatency] = (second, milliseconds)
            }
            state.nextLatency = (state.nextLatency + 1) % Self.latencySamples
            // Older entries give way first, so a slow request from long ago does not hold its place.
            state.slowest.removeAll { $0.second < second - Self.window + 1 }
            guard state.slowest.count < Self.slowestKept || milliseconds > (state.slowest.last?.milliseconds ?? 0) else { return }
            let entry = Entry(status: status, milliseconds: milliseconds, path: String(path.prefix(300)), bytes: bytes, second: second)
            state.slowest.insert(entry, at: state.slowest.firstIndex { $0.milliseconds < milliseconds } ?? state.slowest.endIndex)
            if state.slowest.count > Self.slowestKept { state.slowest.removeLast() }
        }
    }

    /// The figures as of `now` (seconds since the board started).
    func snapshot(now: Int) -> Snapshot {
        state.withLock { state in
            let oldest = now - Self.window + 1
            let recent = state.seconds.filter { $0.second >= oldest && $0.second <= now }
            let lastMinute = recent.filter { $0.second > now - 60 }.reduce(0) { $0 + $1.classes.reduce(0, +) }
            let all = recent.reduce(0) { $0 + $1.classes.reduce(0, +) }
            var minutes: [[Int]] = []
            for minute in 0..<5 where now - minute * 60 >= 0 {
                let range = (now - minute * 60 - 59)...(now - minute * 60)
                minutes.append(
                    recent.filter { range.contains($0.second) }.reduce(into: [Int](repeating: 0, count: 5)) { sum, second in
                        for index in 0..<5 { sum[index] += second.classes[index] }
                    })
            }
            let latencies = state.latencies.filter { $0.second >= oldest }.map(\.milliseconds).sorted()
            state.slowest.removeAll { $0.second < oldest }
            return Snapshot(
                perSecondLastMinute: Double(lastMinute) / Double(min(60, now + 1)),
                perSecondLastFiveMinutes: Double(all) / Double(min(Self.window, now + 1)),
                minutes: minutes,
                p50: Self.percentile(0.50, of: latencies), p95: Self.percentile(0.95, of: latencies),
                p99: Self.percentile(0.99, of: latencies), slowest: state.slowest)
        }
    }

    /// The nearest-rank percentile of sorted values.
    static func percentile(_ fraction: Double, of sorted: [Double]) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
