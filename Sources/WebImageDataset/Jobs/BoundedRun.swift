/// Runs the work made for each of `entries`, at most `concurrency` at a time, in one task group:
/// `work` is asked for each entry in order as a slot frees (nil skips it), so a list of any
/// length is read only as fast as it is worked through. The first error thrown by the sequence
/// or by a piece of work ends the run and cancels what is running.
package func runBounded<Entries: AsyncSequence>(
    _ entries: Entries, concurrency: Int, _ work: (Entries.Element) throws -> (@Sendable () async throws -> Void)?
) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var running = 0
        for try await entry in entries {
            guard let piece = try work(entry) else { continue }
            if running == max(concurrency, 1) {
                try await group.next()
                running -= 1
            }
            group.addTask(operation: piece)
            running += 1
        }
        try await group.waitForAll()
    }
}
