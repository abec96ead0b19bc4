import NIOConcurrencyHelpers

/// An ordered record of events that tests wait on without sleeping: ``waitFor(timeout:_:where:)``
/// returns the first past or future event that matches, or fails when the timeout passes or the
/// log is closed.
public final class EventLog<Event: Sendable>: Sendable {
    private struct Waiter {
        let predicate: @Sendable (Event) -> Bool
        let continuation: CheckedContinuation<Event, any Error>
    }

    private struct State {
        var events: [Event] = []
        var waiters: [Int: Waiter] = [:]
        var expired: Set<Int> = []
        var nextWaiterID = 0
        var closedError: (any Error)?
    }

    private let state = NIOLockedValueBox(State())

    /// Creates an empty log.
    public init() {}

    /// Every event so far, in order.
    public var events: [Event] {
        state.withLockedValue { $0.events }
    }

    /// Appends an event and wakes the waiters it matches.
    public func record(_ event: Event) {
        let matched = state.withLockedValue { state in
            state.events.append(event)
            let ids = state.waiters.filter { $0.value.predicate(event) }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0) }
        }
        for waiter in matched { waiter.continuation.resume(returning: event) }
    }

    /// Fails every pending and later wait with `error`.
    public func close(with error: any Error) {
        let waiters = state.withLockedValue { state in
            state.closedError = error
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
    }

    /// Waits for the first event, past or future, that satisfies `predicate`. The predicate runs
    /// while the log is locked: it must look only at the event.
    ///
    /// - Throws: ``EventLogTimeout`` when none comes within `timeout`, or the error the log was
    ///   closed with.
    @discardableResult
    public func waitFor(
        timeout: Duration = .seconds(10),
        _ description: String = "an event",
        where predicate: @escaping @Sendable (Event) -> Bool
    ) async throws -> Event {
        let id = state.withLockedValue { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        // The timer holds the state, not the log: no weak reference (whose side table
        // LeakSanitizer reports as a leak while the log is alive at exit), and no cycle.
        let state = state
        let timer = Task {
            try await Task.sleep(for: timeout)
            Self.expire(id, in: state, error: EventLogTimeout(description: description))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let outcome: Result<Event, any Error>? = state.withLockedValue { state in
                if let event = state.events.first(where: predicate) { return .success(event) }
                if state.expired.remove(id) != nil { return .failure(EventLogTimeout(description: description)) }
                if let error = state.closedError { return .failure(error) }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    private static func expire(_ id: Int, in state: NIOLockedValueBox<State>, error: any Error) {
        let waiter: Waiter? = state.withLockedValue { state in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.expired.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.continuation.resume(throwing: error)
    }
}

/// A wait on an ``EventLog`` that ran out of time; the description says what was awaited.
public struct EventLogTimeout: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}
