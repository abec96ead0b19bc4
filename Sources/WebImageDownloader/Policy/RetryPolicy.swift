public import Foundation

/// When and how long to wait before trying a failed download again: exponential backoff with
/// full jitter, honouring a server's `Retry-After` up to a cap.
///
/// Retried by default: connection failures, timeouts, 502, 503, 504 and 429. Never retried:
/// other 4xx, bodies that are not images, cancellations, refused addresses. A ``decision`` of
/// your own replaces that rule. Set per downloader (``ImageDownloaderConfiguration/retryPolicy``)
/// or per request (``LoadRequestOptions/retryPolicy``).
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts after the first. Default 2.
    public var maximumRetries: Int
    /// The backoff before the first retry, doubled for each later one. Default 250 ms.
    public var baseDelay: Duration
    /// The longest backoff. Default 8 s.
    public var maximumDelay: Duration
    /// The longest `Retry-After` obeyed; a longer one is cut to this. Default 30 s.
    public var maximumRetryAfter: Duration
    /// Decides which failures are retried, instead of the default rule; nil keeps the default.
    public var decision: RetryDecision?

    /// No retries.
    public static let none = RetryPolicy(maximumRetries: 0)

    /// Creates a policy.
    public init(
        maximumRetries: Int = 2,
        baseDelay: Duration = .milliseconds(250),
        maximumDelay: Duration = .seconds(8),
        maximumRetryAfter: Duration = .seconds(30),
        decision: RetryDecision? = nil
    ) {
        self.maximumRetries = max(0, maximumRetries)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.decision = decision
    }

    /// Whether a failure (of attempt number `attempt`, from 0) is worth another attempt.
    public func shouldRetry(_ error: WebImageError, attempt: Int = 0) -> Bool {
        if let decision { return decision.shouldRetry(error, attempt) }
        if let status = error.code.httpStatus { return [429, 502, 503, 504].contains(status) }
        return error.code == .cannotConnect || error.code == .timedOut
    }

    /// The wait before retry number `attempt` (from 0): the server's `Retry-After` when it
    /// sent one (capped), else a random duration between zero and `baseDelay × 2^attempt`
    /// (capped at `maximumDelay`).
    public func delay(beforeRetry attempt: Int, retryAfter: Duration?) -> Duration {
        if let retryAfter { return min(retryAfter, maximumRetryAfter) }
        let ceiling = min(baseDelay * (1 << min(attempt, 30)), maximumDelay)
        let nanoseconds = MonotonicClock.nanoseconds(ceiling)
        return .nanoseconds(nanoseconds == 0 ? 0 : UInt64.random(in: 0...nanoseconds))
    }

    /// `operation` tried until it succeeds, fails for good, or has been retried
    /// ``maximumRetries`` times, with ``delay(beforeRetry:retryAfter:)`` between tries: the loop
    /// of the object-store clients, whose answers carry no `Retry-After` to honour.
    /// - Throws: the last failure, or `cancelled` when the task is cancelled during a wait.
    package func retrying<Value>(_ operation: () async throws(WebImageError) -> Value) async throws(WebImageError) -> Value {
        var attempt = 0
        while true {
            do {
                return try await operation()
            } catch  where attempt < maximumRetries && shouldRetry(error, attempt: attempt) {
                do {
                    try await Task.sleep(for: delay(beforeRetry: attempt, retryAfter: nil))
                } catch {
                    throw WebImageError(.cancelled, underlying: error)
                }
                attempt += 1
            }
        }
    }

    /// Parses `Retry-After`: delay-seconds, or an HTTP date (RFC 9110), relative to `now`.
    public static func retryAfter(_ header: String?, now: Date = Date()) -> Duration? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Int(header) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(header) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }
}

/// A rule for which failures are retried, for ``RetryPolicy/decision``. Loads share a transfer
/// only when they carry the same instance, so the type compares by identity.
public final class RetryDecision: Sendable, Hashable {
    /// Given the failure and the attempt it ended (from 0), whether to try again.
    public let shouldRetry: @Sendable (WebImageError, _ attempt: Int) -> Bool

    /// Wraps a closure.
    public init(_ shouldRetry: @escaping @Sendable (WebImageError, _ attempt: Int) -> Bool) {
        self.shouldRetry = shouldRetry
    }

    public static func == (lhs: RetryDecision, rhs: RetryDecision) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
