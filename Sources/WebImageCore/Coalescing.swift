/// The callers of one piece of shared work (a manager's load, a downloader's transfer): who gets
/// its events, at what priority, and whether they want partial results. A value its owner keeps
/// inside its own lock, so that joining, leaving and finishing are atomic with the rest of the
/// owner's state; the one coalescing bookkeeping both stages use, tested alone
/// (`CoalescingTests`). Inlinable, so that each owner's module specializes it.
@usableFromInline
package struct Subscribers<Event: Sendable, Priority: Comparable & Sendable>: Sendable {
    /// One caller.
    @usableFromInline
    package struct Subscriber: Sendable {
        /// Receives the work's events.
        @usableFromInline package let deliver: @Sendable (Event) -> Void
        /// What the caller asked for; the work runs at the highest of its callers'.
        @usableFromInline package var priority: Priority
        /// Whether partial results (progressive images, partial bytes) go to this caller.
        @usableFromInline package let wantsPartial: Bool

        @inlinable
        package init(priority: Priority, wantsPartial: Bool, deliver: @escaping @Sendable (Event) -> Void) {
            self.deliver = deliver
            self.priority = priority
            self.wantsPartial = wantsPartial
        }
    }

    // Arrays, not a dictionary by id: a work has one caller or a few, and a dictionary of a
    // generic element looks its element's type up at run time on every operation (callgrind:
    // about 10,000 instructions more per load started).
    @usableFromInline var members: [Subscriber] = []
    @usableFromInline var ids: [Int] = []
    @usableFromInline var lastID = 0
    /// Whether ``finish()`` was called: the work has given its result and takes no callers.
    @usableFromInline package internal(set) var isFinished = false

    @inlinable
    package init() {}

    /// Adds a caller; returns its id and the work's priority before it joined (nil when it is
    /// the first) and after.
    @inlinable
    package mutating func add(_ subscriber: Subscriber) -> (id: Int, previous: Priority?, current: Priority) {
        let previous = priority
        lastID += 1
        members.append(subscriber)
        ids.append(lastID)
        return (lastID, previous, priority ?? subscriber.priority)
    }

    /// Removes a caller; true when it was the last one of work not yet finished, which should
    /// then stop. Removing an unknown id (a caller already finished) changes nothing.
    @inlinable
    package mutating func remove(_ id: Int) -> Bool {
        take(id).wasLast
    }

    /// Removes a caller and returns it, to be told itself why it stopped; `wasLast` as
    /// ``remove(_:)`` answers. An unknown id gives nil and false.
    @inlinable
    package mutating func take(_ id: Int) -> (member: Subscriber?, wasLast: Bool) {
        guard let index = ids.firstIndex(of: id) else { return (nil, false) }
        ids.remove(at: index)
        let member = members.remove(at: index)
        return (member, members.isEmpty && !isFinished)
    }

    /// Changes a caller's priority; returns the work's priority afterwards.
    @inlinable
    package mutating func setPriority(_ priority: Priority, of id: Int) -> Priority? {
        if let index = ids.firstIndex(of: id) { members[index].priority = priority }
        return self.priority
    }

    /// The highest priority among the callers; nil without callers.
    @inlinable
    package var priority: Priority? {
        // A loop, not `map(\.priority).max()`: a key path in generic code is made anew at run
        // time on every call.
        var highest: Priority?
        for member in members where highest.map({ member.priority > $0 }) ?? true { highest = member.priority }
        return highest
    }

    /// Whether any caller wants partial results.
    @inlinable
    package var wantsPartial: Bool { members.contains { $0.wantsPartial } }

    /// Whether no caller is left.
    @inlinable
    package var isEmpty: Bool { members.isEmpty }

    /// How many callers there are.
    @inlinable
    package var count: Int { members.count }

    /// The callers an event goes to: a partial result only to those who asked for one.
    @inlinable
    package func recipients(partial: Bool) -> [Subscriber] {
        guard !isFinished else { return [] }
        return partial ? members.filter { $0.wantsPartial } : members
    }

    /// Ends the work: returns the callers to give the result to, once; later calls return none.
    @inlinable
    package mutating func finish() -> [Subscriber] {
        guard !isFinished else { return [] }
        isFinished = true
        return removeAll()
    }

    /// Takes every caller away without finishing the work (which is then cancelled): they are
    /// the caller's to tell.
    @inlinable
    package mutating func removeAll() -> [Subscriber] {
        defer {
            members = []
            ids = []
        }
        return members
    }
}

/// Shared work by key: a caller joins the work in progress for its key, or starts it. Kept
/// inside its owner's lock, like ``Subscribers``.
@usableFromInline
package struct CoalescingTable<Key: Hashable & Sendable, Work: AnyObject & Sendable>: Sendable {
    @usableFromInline var works: [Key: Work] = [:]

    @inlinable
    package init() {}

    /// The work in progress for `key`, or a new one made by `make` and kept; `isNew` tells which.
    @inlinable
    package mutating func join(_ key: Key, make: () -> Work) -> (work: Work, isNew: Bool) {
        if let existing = works[key] { return (existing, false) }
        let created = make()
        works[key] = created
        return (created, true)
    }

    /// Forgets `work` under `key`, if it is still the one kept there (a newer work for the same
    /// key may have replaced it).
    @inlinable
    package mutating func remove(_ work: Work, for key: Key) {
        if let index = works.index(forKey: key), works[index].value === work { works.remove(at: index) }
    }

    /// Forgets every work; returns them.
    @inlinable
    package mutating func removeAll() -> [Work] {
        defer { works = [:] }
        return Array(works.values)
    }

    /// How many works are in progress.
    @inlinable
    package var count: Int { works.count }

    /// The works in progress, in no order.
    @inlinable
    package var all: Dictionary<Key, Work>.Values { works.values }
}
