import WebImage

/// At most `concurrency` requests fetch and process at once; up to `queueLength` more wait in
/// arrival order; beyond that a request is refused at once (503 with `Retry-After`), so that a
/// burst costs memory for the queue, not for a pile of half-done images. A waiting request whose
/// client goes away leaves the queue.
final class AdmissionGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID = 0
    }

    let concurrency: Int
    let queueLength: Int
    private let state = Locked(State())

    init(concurrency: Int, queueLength: Int) {
        self.concurrency = max(1, concurrency)
        self.queueLength = max(0, queueLength)
    }

    /// Requests running now.
    var running: Int { state.withLock { $0.running } }
    /// Requests waiting for a slot.
    var queued: Int { state.withLock { $0.waiting.count } }

    /// Waits for a slot. Throws 503 when the queue is full and 499 when the task is cancelled
    /// while it waits. Every successful call is matched by one ``leave()``.
    func enter() async throws(ProxyError) {
        enum Admission {
            case now, full
            case wait(Int)
        }
        let admission: Admission = state.withLock { state in
            if state.running < concurrency {
                state.running += 1
                return .now
            }
            guard state.waiting.count < queueLength else { return .full }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch admission {
        case .now: return
        case .full: throw ProxyError(status: 503, "the server is busy: \(concurrency) running, \(queueLength) waiting", retryAfter: 1)
        case .wait(let id):
            let admitted = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let cancelled = state.withLock { state in
                        if Task.isCancelled { return true }
                        state.waiting.append((id, continuation))
                        return false
                    }
                    if cancelled { continuation.resume(returning: false) }
                }
            } onCancel: {
                let continuation = state.withLock { state in
                    state.waiting.firstIndex { $0.id == id }.map { state.waiting.remove(at: $0).continuation }
                }
                continuation?.resume(returning: false)
            }
            guard admitted else { throw ProxyError(status: 499, "the client went away while the request waited") }
        }
    }

    /// Frees a slot: the longest-waiting request takes it.
    func leave() {
        let next = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil as CheckedContinuation<Bool, Never>?
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}
