/// The callers of one piece of shared work (a manager's load, a downloader's transfer): who gets
/// its events, at what priority, and whether they want partial results. A value its owner keeps
/// inside its own lock, so that joining, leaving and finishing are atomic with the rest of the
/// owner's state; the one coalescing bookkeeping both stages use, tested alone
/// (`CoalescingTests`).
package struct Subscribers<Event: Sendable, Priority: Comparable & Sendable>: Sendable {
    /// One caller.
    package struct Subscriber: Sendable {
        /// Receives the work's events.
        package let deliver: @Sendable (Event) -> Void
        /// What the caller asked for; the work runs at the highest of its callers'.
        package var priority: Priority
        /// Whether partial results (progressive images, partial bytes) go to this caller.
        package let wantsPartial: Bool

        package init(priority: Priority, wantsPartial: Bool, deliver: @escaping @Sendable (Event) -> Void) {
            self.deliver = deliver
            self.priority = priority
            self.wantsPartial = wantsPartial
        }
    }

    private var members: [Int: Subscriber] = [:]
    private var lastID = 0
    /// Whether ``finish()`` was called: the work has given its result and takes no callers.
    package private(set) var isFinished = false

    package init() {}

    /// Adds a caller; returns its id and the work's priority before it joined (nil when it is
    /// the first) and after.
    package mutating func add(_ subscriber: Subscriber) -> (id: Int, previous: Priority?, current: Priority) {
        let previous = priority
        lastID += 1
        members[lastID] = subscriber
        return (lastID, previous, priority ?? subscriber.priority)
    }

    /// Removes a caller; true when it was the last one of work not yet finished, which should
    /// then stop. Removing an unknown id (a caller already finished) changes nothing.
    package mutating func remove(_ id: Int) -> Bool {
        guard members.removeValue(forKey: id) != nil else { return false }
        return members.isEmpty && !isFinished
    }

    /// Changes a caller's priority; returns the work's priority afterwards.
    package mutating func setPriority(_ priority: Priority, of id: Int) -> Priority? {
        members[id]?.priority = priority
        return self.priority
    }

    /// The highest priority among the callers; nil without callers.
    package var priority: Priority? { members.values.lazy.map(\.priority).max() }

    /// Whether any caller wants partial results.
    package var wantsPartial: Bool { members.values.contains { $0.wantsPartial } }

    /// Whether no caller is left.
    package var isEmpty: Bool { members.isEmpty }

    /// The callers an event goes to: a partial result only to those who asked for one.
    package func recipients(partial: Bool) -> [Subscriber] {
        guard !isFinished else { return [] }
        return partial ? members.values.filter(\.wantsPartial) : Array(members.values)
    }

    /// Ends the work: returns the callers to give the result to, once; later calls return none.
    package mutating func finish() -> [Subscriber] {
        guard !isFinished else { return [] }
        isFinished = true
        defer { members = [:] }
        return Array(members.values)
    }

    /// Takes every caller away without finishing the work (which is then cancelled): they are
    /// the caller's to tell.
    package mutating func removeAll() -> [Subscriber] {
        defer { members = [:] }
        return Array(members.values)
    }
}

/// Shared work by key: a caller joins the work in progress for its key, or starts it. Kept
/// inside its owner's lock, like ``Subscribers``.
package struct CoalescingTable<Key: Hashable & Sendable, Work: AnyObject & Sendable>: Sendable {
    private var works: [Key: Work] = [:]

    package init() {}

    /// The work in progress for `key`, or a new one made by `make` and kept; `isNew` tells which.
    package mutating func join(_ key: Key, make: () -> Work) -> (work: Work, isNew: Bool) {
        if let existing = works[key] { return (existing, false) }
        let created = make()
        works[key] = created
        return (created, true)
    }

    /// Forgets `work` under `key`, if it is still the one kept there (a newer work for the same
    /// key may have replaced it).
    package mutating func remove(_ work: Work, for key: Key) {
        if let kept = works[key], kept === work { works[key] = nil }
    }

    /// Forgets every work; returns them.
    package mutating func removeAll() -> [Work] {
        defer { works = [:] }
        return Array(works.values)
    }

    /// How many works are in progress.
    package var count: Int { works.count }
}
