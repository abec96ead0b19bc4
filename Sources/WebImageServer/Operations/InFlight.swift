import WebImage

/// Concurrent identical requests share one piece of work: the first starts it, the others wait
/// for the same result, and the entry is gone once it finishes (the result cache keeps it
/// after that).
final class InFlight<Value: Sendable>: Sendable {
    private let tasks = Locked([String: Task<Result<Value, ProxyError>, Never>]())

    /// The result of the work running for `key`, or of `work` started now.
    func run(_ key: String, _ work: @escaping @Sendable () async throws(ProxyError) -> Value) async throws(ProxyError) -> Value {
        let task = tasks.withLock { tasks in
            if let running = tasks[key] { return running }
            let task = Task { () -> Result<Value, ProxyError> in
                let result: Result<Value, ProxyError>
                do throws(ProxyError) { result = .success(try await work()) } catch { result = .failure(error) }
                _ = self.tasks.withLock { $0.removeValue(forKey: key) }
                return result
            }
            tasks[key] = task
            return task
        }
        return try await task.value.get()
    }
}
