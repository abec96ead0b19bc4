package import Tracing

/// Spans for the synchronous stages of one job (decode, transform, encode), made beneath the
/// span that was current when the job was handed out: a stage running on a work-pool thread has
/// no task-local context of its own. Without a tracer a stage is only its body.
package struct StageSpans: Sendable {
    private let tracer: (any Tracer)?
    private let parent: ServiceContext?

    /// No spans.
    package static let off = StageSpans(tracer: nil)

    /// Stages beneath the span current now; none without `tracer`.
    package init(tracer: (any Tracer)?) {
        self.tracer = tracer
        parent = tracer == nil ? nil : ServiceContext.current
    }

    /// `body` as a span called `name`, with `attributes` (worked out only when traced); an error it
    /// throws marks the span failed.
    package func measure<T, Failure: Error>(
        _ name: String, attributes: @autoclosure () -> [(String, String)] = [], _ body: () throws(Failure) -> T
    ) throws(Failure) -> T {
        guard let tracer else { return try body() }
        let span = tracer.startSpan(name, context: parent ?? .topLevel)
        for (key, value) in attributes() { span.attributes[key] = value }
        defer { span.end() }
        do {
            return try body()
        } catch {
            span.fail(error)
            throw error
        }
    }
}

/// `body` in a span called `name`, beneath the current span and current itself while `body`
/// runs (so what `body` starts, a download among them, is beneath it); without `tracer` only
/// `body`. An error `body` throws marks the span failed.
package func withStageSpan<T, Failure: Error>(
    _ name: String, tracer: (any Tracer)?, isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws(Failure) -> T
) async throws(Failure) -> T {
    guard let tracer else { return try await body() }
    let span = tracer.startSpan(name, context: ServiceContext.current ?? .topLevel)
    defer { span.end() }
    // A Result, because the task-local scope rethrows untyped.
    let outcome: Result<T, Failure> = await ServiceContext.withValue(span.context) { () async -> Result<T, Failure> in
        do throws(Failure) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
    if case .failure(let error) = outcome { span.fail(error) }
    return try outcome.get()
}

extension Span {
    /// Records `error` and marks the span failed.
    package func fail(_ error: some Error) {
        recordError(error)
        setStatus(SpanStatus(code: .error, message: "\(error)"))
    }
}
