import Testing

@testable import WebImageCore
import WebImageTestSupport

/// The bookkeeping both coalescing stages (the manager's shared loads, the downloader's
/// transfers) keep, tested without either.
@Suite("Subscribers and CoalescingTable")
struct CoalescingTests {
    private typealias Group = Subscribers<String, Int>

    private final class Work: Sendable {}

    private static func subscriber(_ priority: Int, partial: Bool = false, into log: Locked<[String]>, name: String) -> Group.Subscriber {
        Group.Subscriber(priority: priority, wantsPartial: partial) { event in log.withLock { $0.append("\(name):\(event)") } }
    }

    @Test("the work runs at its callers' highest priority, and says when a caller raised it")
    func priorities() {
        let log = Locked<[String]>([])
        var group = Group()
        #expect(group.priority == nil)
        let first = group.add(Self.subscriber(1, into: log, name: "a"))
        #expect(first.previous == nil && first.current == 1)
        let second = group.add(Self.subscriber(3, into: log, name: "b"))
        #expect(second.previous == 1 && second.current == 3 && second.id != first.id)
        let third = group.add(Self.subscriber(2, into: log, name: "c"))
        #expect(third.previous == 3 && third.current == 3)
        let lowered = group.setPriority(0, of: second.id)
        #expect(lowered == 2)
        _ = group.remove(third.id)
        #expect(group.priority == 1)
    }

    @Test("partial results go only to the callers who asked; a finished work delivers nothing more")
    func recipients() {
        let log = Locked<[String]>([])
        var group = Group()
        _ = group.add(Self.subscriber(1, partial: true, into: log, name: "wants"))
        _ = group.add(Self.subscriber(1, into: log, name: "whole"))
        #expect(group.wantsPartial)
        #expect(group.recipients(partial: true).count == 1)
        #expect(group.recipients(partial: false).count == 2)
        for subscriber in group.recipients(partial: true) { subscriber.deliver("piece") }
        #expect(log.withLock { $0 } == ["wants:piece"])
        let finished = group.finish()
        #expect(finished.count == 2)
        #expect(group.isFinished && group.isEmpty)
        let again = group.finish()
        #expect(again.isEmpty, "the result is given once")
        #expect(group.recipients(partial: false).isEmpty)
    }

    @Test("only the last caller of unfinished work stops it; unknown and finished callers change nothing")
    func leaving() {
        let log = Locked<[String]>([])
        var group = Group()
        let a = group.add(Self.subscriber(1, into: log, name: "a")).id
        let b = group.add(Self.subscriber(1, into: log, name: "b")).id
        let first = group.remove(a)
        let repeated = group.remove(a)
        let last = group.remove(b)
        #expect(!first)
        #expect(!repeated, "already gone")
        #expect(last, "the last one")

        var finished = Group()
        let c = finished.add(Self.subscriber(1, into: log, name: "c")).id
        _ = finished.finish()
        let afterFinish = finished.remove(c)
        #expect(!afterFinish, "a finished work is not stopped by its callers leaving")

        var cancelled = Group()
        _ = cancelled.add(Self.subscriber(1, into: log, name: "d"))
        let taken = cancelled.removeAll()
        #expect(taken.count == 1 && cancelled.isEmpty && !cancelled.isFinished)
    }

    @Test("callers of one key share one work; a work replaced under its key is not removed by the old one's end")
    func table() {
        var table = CoalescingTable<String, Work>()
        let (first, isNew) = table.join("a") { Work() }
        let (again, joinedNew) = table.join("a") { Work() }
        #expect(isNew && !joinedNew && first === again && table.count == 1)
        table.remove(first, for: "a")
        let (second, _) = table.join("a") { Work() }
        #expect(second !== first)
        table.remove(first, for: "a")
        #expect(table.count == 1, "the old work's end leaves the new one")
        _ = table.join("b") { Work() }
        let removed = table.removeAll()
        #expect(removed.count == 2 && table.count == 0)
    }
}
