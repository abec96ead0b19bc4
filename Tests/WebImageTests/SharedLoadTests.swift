import Foundation
import Testing
import WebImageCore
import WebImageTesting

@testable import WebImage
import WebImageTestSupport

/// The manager's shared load as a state machine, without I/O: who joins, at what priority, what a
/// late caller is given, what escalates and cancels the load's task, and that the end is delivered once
/// (issue 39: the coalescing state tested apart from the loads it shares).
@Suite("SharedLoad: one load's callers, without I/O")
struct SharedLoadTests {
    /// Events a subscriber received, in order.
    final class Inbox: Sendable {
        let events = Locked<[String]>([])

        func subscriber(_ priority: LoadRequestOptions.Priority, partial: Bool = false) -> SharedLoad.Subscriber {
            SharedLoad.Subscriber(priority: priority, wantsPartial: partial) { event in
                let text: String
                switch event {
                case .progress(let received, _): text = "progress \(received)"
                case .image(let result, let isPartial): text = (isPartial ? "partial " : "image ") + result.url.lastPathComponent
                case .finished(let result): text = "finished " + ((try? result?.get())?.url.lastPathComponent ?? "nil")
                }
                self.events.withLock { $0.append(text) }
            }
        }

        var received: [String] { events.withLock { $0 } }
    }

    static func load() -> SharedLoad {
        let url = URL(string: "https://example.com/a.png")!
        return SharedLoad(
            key: SharedLoadKey(
                cacheKey: CacheKey(url.absoluteString), url: url, options: [], cacheTypes: [], request: LoadRequestOptions(),
                alternativeSources: [], components: [], uniqueness: 0))
    }

    static func result(_ name: String, partial: Bool = false) -> ImageResult {
        ImageResult(image: nil, data: Data(), cacheType: .none, url: URL(string: "https://example.com/" + name)!, isFinished: !partial)
    }

    /// A task at `priority` that records its start and each escalation, and ends when cancelled.
    static func escalationRecordingTask(_ priority: TaskPriority, log: EventLog<String>) -> Task<Void, Never> {
        Task(priority: priority) {
            await withTaskPriorityEscalationHandler {
                log.record("started")
                await untilCancelled()
            } onPriorityEscalated: { _, escalated in
                log.record("escalated to \(escalated)")
            }
        }
    }

    @Test("a caller of higher priority raises the load's, and escalating passes it to the load's task; a lower one raises nothing")
    func priorities() async throws {
        let load = Self.load()
        let inbox = Inbox()
        let first = load.add(inbox.subscriber(.low))
        #expect(!first.raisedPriority && load.priority == .low)
        let log = EventLog<String>()
        let task = Self.escalationRecordingTask(.low, log: log)
        load.start(task, priority: .low)
        try await log.waitFor { $0 == "started" }
        let second = load.add(inbox.subscriber(.high))
        #expect(second.raisedPriority && load.priority == .high)
        load.escalate()
        try await log.waitFor { $0 == "escalated to \(TaskPriority.high)" }
        let third = load.add(inbox.subscriber(.normal))
        #expect(!third.raisedPriority && load.priority == .high)
        #expect(!task.isCancelled)
        load.cancel()
        await task.value
    }

    @Test("partial images go to the callers who asked; a whole image is kept for a caller who joins later; the end is delivered once")
    func events() {
        let load = Self.load()
        let (plain, progressive) = (Inbox(), Inbox())
        _ = load.add(plain.subscriber(.normal))
        _ = load.add(progressive.subscriber(.normal, partial: true))
        #expect(load.wantsPartialImages)
        load.broadcast(.progress(received: 10, expected: nil))
        load.broadcast(.image(Self.result("partial.png", partial: true), isPartial: true))
        load.broadcast(.image(Self.result("cached.png"), isPartial: false))
        let late = load.add(Inbox().subscriber(.normal))
        #expect(late.cached?.url.lastPathComponent == "cached.png", "a caller joining after the cached image is given it")
        let callers = load.finish()
        #expect(callers.count == 3)
        for caller in callers { caller.deliver(.finished(.success(Self.result("final.png")))) }
        #expect(load.finish().isEmpty, "the end is given out once")
        load.broadcast(.progress(received: 20, expected: nil))
        #expect(plain.received == ["progress 10", "image cached.png", "finished final.png"])
        #expect(progressive.received == ["progress 10", "partial partial.png", "image cached.png", "finished final.png"])
        #expect(load.add(Inbox().subscriber(.normal)).cached == nil, "a finished load keeps no image")
    }

    @Test("the last caller leaving says stop; a task kept after everyone left is cancelled at once; cancel reaches the task")
    func leavingAndCancelling() async {
        let load = Self.load()
        let inbox = Inbox()
        let first = load.add(inbox.subscriber(.normal)).id
        let second = load.add(inbox.subscriber(.normal)).id
        #expect(!load.remove(first), "one caller is left")
        #expect(!load.remove(first), "an unknown caller changes nothing")
        #expect(load.remove(second), "the last caller leaving stops the load")
        let late = Self.escalationRecordingTask(.medium, log: EventLog())
        load.start(late, priority: .normal)
        await late.value
        #expect(late.isCancelled, "the task of a load nobody waits for is cancelled when it is kept")

        let running = Self.load()
        _ = running.add(inbox.subscriber(.normal))
        let task = Self.escalationRecordingTask(.medium, log: EventLog())
        running.start(task, priority: .normal)
        #expect(!task.isCancelled)
        running.cancel()
        await task.value
        #expect(task.isCancelled)
    }
}
