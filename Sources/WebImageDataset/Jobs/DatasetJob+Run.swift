extension DatasetJob {
    /// The dataset part of a run: each entry the run's slice takes made into a sample and added
    /// to `writer`'s shards, `concurrency` rows at a time; a row already in a whole shard (a
    /// resumed run) is skipped. `wrap` surrounds each row's work (a trace span, say); `finished`
    /// hears each sample made, or nil for a row skipped. The shards are finished (with their
    /// stats) once the list is done, or abandoned when the run fails.
    /// - Returns: how many rows the run took.
    package func write(
        _ entries: ListEntries, into writer: DatasetWriter, concurrency: Int,
        wrap: (ListRow, @escaping @Sendable () async throws -> Void) -> @Sendable () async throws -> Void = { $1 },
        finished: @escaping @Sendable (ListRow, DatasetWriter.Sample?) -> Void
    ) async throws -> Int {
        do {
            let taken = try await entries.run(on: manager, concurrency: concurrency) { row, position in
                guard !writer.isWritten(position: position) else {
                    finished(row, nil)
                    return nil
                }
                let key = writer.key(forPosition: position)
                return wrap(row) {
                    let sample = await sample(row, key: key, position: position)
                    finished(row, sample)
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
