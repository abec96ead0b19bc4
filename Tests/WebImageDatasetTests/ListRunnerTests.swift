import Foundation
import Testing
import WebImage
import WebImageTestSupport

@testable import WebImageDataset

/// The list runner: a run's rows as an `AsyncSequence` (`ListEntries`) worked through by an
/// `ImagePrefetcher` (`ListEntries.run(on:concurrency:)`), which `prefetch` runs every list on.
@Suite("the list runner: entries of a run's slice, at most N at once")
struct ListRunnerTests {
    private static func list(_ count: Int) throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory("runner")
        let path = directory.url.appendingPathComponent("list.txt").path
        let text = (0..<count).map { "http://host\($0 % 7).test/\($0).jpg" }.joined(separator: "\n")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    /// A manager the runs never load through (their work is the test's).
    private static func manager() -> ImageManager {
        ImageManager(cache: ImageCache(disk: nil), loader: DataURLLoader())
    }

    private static func entries(_ path: String, slice: ListSlice?) async throws -> [ListEntry] {
        var all: [ListEntry] = []
        for try await entry in ListEntries(try SampleLists(paths: [path], format: .txt, columns: ListColumns()), slice: slice) {
            all.append(entry)
        }
        return all
    }

    @Test("every row once with its index; a slice's rows numbered 0, 1, 2... in list order; N slices take every row once")
    func slices() async throws {
        let (directory, path) = try Self.list(100)
        _ = directory
        var takenBySlices = 0
        for index in 0..<3 {
            let slice = ListSlice(index: index, count: 3)
            let entries = try await Self.entries(path, slice: slice)
            #expect(entries.map(\.index) == Array(0..<100))
            let taken = entries.filter { $0.position != nil }
            #expect(taken.map { $0.position! } == Array(0..<taken.count))
            #expect(entries.allSatisfy { ($0.position != nil) == slice.contains($0.row.url) })
            let counted = try ListEntries(try SampleLists(paths: [path], format: .txt, columns: ListColumns()), slice: slice).countTaken()
            #expect(counted == taken.count)
            takenBySlices += taken.count
        }
        #expect(takenBySlices == 100)
        let whole = try await Self.entries(path, slice: nil)
        #expect(whole.map(\.position) == (0..<100).map { $0 })
    }

    /// Holds every arrival until `count` have arrived, then lets all through.
    private actor Latch {
        let count: Int
        private var arrived = 0
        private var waiting: [CheckedContinuation<Void, Never>] = []
        init(count: Int) { self.count = count }

        func arrive() async {
            arrived += 1
            if arrived >= count {
                for waiter in waiting { waiter.resume() }
                waiting = []
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }
    }

    private actor Running {
        private(set) var now = 0
        private(set) var most = 0
        private(set) var done = 0
        func start() {
            now += 1
            most = max(most, now)
        }
        func end() {
            now -= 1
            done += 1
        }
    }

    @Test("at most N pieces of work at once, N reached (the first N wait for each other), every piece run")
    func bounded() async throws {
        let (directory, path) = try Self.list(50)
        _ = directory
        let latch = Latch(count: 4)
        let running = Running()
        let entries = ListEntries(try SampleLists(paths: [path], format: .txt, columns: ListColumns()), slice: nil)
        let taken = try await entries.run(on: Self.manager(), concurrency: 4) { _, _ in
            {
                await running.start()
                await latch.arrive()
                await running.end()
            }
        }
        #expect(taken == 50)
        #expect(await running.most == 4)
        #expect(await running.done == 50)
    }

    private struct Stop: Error {}

    @Test("a piece of work that throws ends the run with its error: no more rows are asked for")
    func stopsAtAnError() async throws {
        let (directory, path) = try Self.list(50)
        _ = directory
        let entries = ListEntries(try SampleLists(paths: [path], format: .txt, columns: ListColumns()), slice: nil)
        var asked = 0
        await #expect(throws: Stop.self) {
            try await entries.run(on: Self.manager(), concurrency: 1) { _, position in
                asked += 1
                return { if position == 2 { throw Stop() } }
            }
        }
        // One at a time: the row after the failing one is made before the failure is awaited.
        #expect(asked == 4)
    }
}
