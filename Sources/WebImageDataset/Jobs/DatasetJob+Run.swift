extension DatasetJob {
    /// The dataset part of a run: each entry the run's slice takes made into a sample and added
    /// to `writer`'s shards, `concurrency` rows at a time; a row already in a whole shard (a
    /// resumed run) is skipped. `wrap` surrounds each row's work (a trace span, say); `finished`
    /// hears each sample made, or nil for a row skipped. The shards are finished (with their
    /// stats) once the list is done, or abandoned when the run fails.
    /// - Returns: how many rows the run took.
    package func write<Entries: AsyncSequence>(
        _ entries: Entries, into writer: DatasetWriter, concurrency: Int,
        wrap: (ListRow, @escaping @Sendable () async throws -> Void) -> @Sendable () async throws -> Void = { $1 },
        finished: @escaping @Sendable (ListRow, DatasetWriter.Sample?) -> Void
    ) async throws -> Int where Entries.Element == ListEntry {
        var taken = 0
        do {
            try await runBounded(entries, concurrency: concurrency) { entry in
                guard let position = entry.position else { return nil }
                taken += 1
                guard !writer.isWritten(position: position) else {
                    finished(entry.row, nil)
                    return nil
                }
                let key = writer.key(forPosition: position)
                return wrap(entry.row) {
                    let sample = await sample(entry.row, key: key, position: position)
                    finished(entry.row, sample)
                    try await writer.add(sample)
                }
            }
            try await writer.finish(total: taken)
            return taken
        } catch {
            await writer.abandon()
            throw error
        }
    }
}
