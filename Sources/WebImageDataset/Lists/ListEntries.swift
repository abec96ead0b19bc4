package import WebImage

/// One row of a list as a run meets it: its index among the list's rows, and its place in the
/// run when the run's slice takes it.
package struct ListEntry: Sendable {
    package let row: ListRow
    /// The row's index among every row of the lists, from 0.
    package let index: Int
    /// The row's place among the rows the run takes, from 0; nil when `--shard` gives it to
    /// another run.
    package let position: Int?
}

/// The rows of lists as a run meets them, read a block at a time and never held: each row with
/// its index in the lists and, when the run's slice takes it, its place in the run (N runs with
/// `--shard I/N` over copies of one list each number their own rows from 0).
package struct ListEntries: AsyncSequence {
    package typealias Element = ListEntry
    private let lists: SampleLists
    private let slice: ListSlice?

    /// The entries of `lists` for the run that takes `slice` of them (all of them when nil).
    /// `lists` is read as the sequence is iterated, once.
    package init(_ lists: SampleLists, slice: ListSlice?) {
        self.lists = lists
        self.slice = slice
    }

    package func makeAsyncIterator() -> Iterator {
        Iterator(lists: lists, slice: slice)
    }

    package struct Iterator: AsyncIteratorProtocol {
        let lists: SampleLists
        let slice: ListSlice?
        private var index = 0
        private var position = 0

        init(lists: SampleLists, slice: ListSlice?) {
            self.lists = lists
            self.slice = slice
        }

        /// The next entry; nil after the last row.
        /// - Throws: ``DatasetError`` for a list that cannot be read further.
        package mutating func next() async throws(DatasetError) -> ListEntry? {
            try nextEntry()
        }

        /// The next entry, without suspending: a list is read from a file or a pipe.
        package mutating func nextEntry() throws(DatasetError) -> ListEntry? {
            guard let row = try lists.next() else { return nil }
            defer { index += 1 }
            guard slice?.contains(row.url) ?? true else { return ListEntry(row: row, index: index, position: nil) }
            defer { position += 1 }
            return ListEntry(row: row, index: index, position: position)
        }
    }

    /// Works through the rows the run takes in a prefetcher over `manager`, at most
    /// `concurrency` at once (``ImagePrefetcher/prefetch(_:making:)``): `work` makes each taken
    /// row's work with its place in the run, or nil to skip it; `everyRow` sees every row
    /// first, taken or not. The first error ends the run and cancels what is running.
    /// - Returns: how many rows the run took.
    package func run(
        on manager: ImageManager, concurrency: Int, everyRow: (ListEntry) -> Void = { _ in },
        _ work: (ListRow, _ position: Int) throws -> (@Sendable () async throws -> Void)?
    ) async throws -> Int {
        let prefetcher = ImagePrefetcher(manager: manager)
        prefetcher.maxConcurrentPrefetchCount = concurrency
        var taken = 0
        try await prefetcher.prefetch(self) { entry in
            everyRow(entry)
            guard let position = entry.position else { return nil }
            taken = position + 1
            return try work(entry.row, position)
        }
        return taken
    }

    /// How many rows the run takes, read through once without keeping them.
    package func countTaken() throws(DatasetError) -> Int {
        var iterator = makeAsyncIterator()
        var count = 0
        while let entry = try iterator.nextEntry() {
            if entry.position != nil { count += 1 }
        }
        return count
    }
}
