public import AsyncHTTPClient
public import Foundation
import FoundationNetworking
import Logging
import NIOCore
import NIOHTTP1
import NIOSOCKS
import NIOSSL
import Tracing

/// Downloads images over HTTP(S) with AsyncHTTPClient (SDWebImage's `SDWebImageDownloader`).
///
/// One transfer per URL and per set of request-affecting options, however many callers: each
/// ``loadData(_:options:events:)`` receives progress, optional partial data and the result;
/// cancelling a caller's task ends that caller's wait, and cancelling the last one cancels the
/// transfer and closes its connection. Transfers past ``ImageDownloaderConfiguration/maximumConcurrentDownloads``
/// wait in a queue, high priority first, then in FIFO or LIFO order.
///
/// A response is an image when its status is acceptable and its media type is `image/*` (or
/// `application/octet-stream`, or absent, with bytes that sniff as an image); an HTML error page
/// is `WebImageError.Code.notAnImage`. A request carrying ``HTTPValidators`` is conditional, and
/// a 304 finishes with `WebImageError.Code.notModified` so the caller keeps its copy. The body
/// is capped while it streams.
///
/// Requests are traced (AsyncHTTPClient's spans) only when `Telemetry` names a tracer or the
/// application has bootstrapped one, and AsyncHTTPClient's own debug and trace logs go to the
/// downloader's logger only when that logger shows them: both cost as much as the rest of a
/// request's handling when nothing reads them.
public final class ImageDownloader: ImageLoader {
    /// The configuration the downloader was created with.
    public let configuration: ImageDownloaderConfiguration
    /// The configuration's rules for responses and retries, apart from any socket or clock.
    private let responsePolicy: DownloadResponsePolicy

    /// The HTTP clients, by way out (direct or by proxy, verifying certificates or not), and
    /// the address guard they go through when there is a policy.
    private let clients: DownloaderClients
    private let scheduler: DownloadScheduler
    private let headers: Locked<[(name: String, value: String)]>
    private let partials: PartialDownloads
    /// The origins whose Basic challenge was answered: they get the credentials at once from then on.
    private let challengedOrigins = Locked(Set<String>())
    private let observers = Locked<(continuations: [Int: AsyncStream<DownloadEvent>.Continuation], next: Int)>(([:], 0))
    private let instruments: DownloaderInstruments
    private let logger: Logger
    /// The logger handed to AsyncHTTPClient, which logs only at debug and trace: the downloader's
    /// own when it shows those levels, otherwise none, because the client attaches a request id
    /// to the logger's metadata on every request, which a real handler formats each time.
    private let clientLogger: Logger?
    /// Where spans go; nil makes none and sends no `traceparent`.
    private let tracer: (any Tracer)?

    /// Creates a downloader with its own HTTP clients, on the shared event loops. Call
    /// ``shutdown()`` when done with it.
    public convenience init(configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration(), telemetry: Telemetry = .default) {
        self.init(configuration: configuration, external: nil, telemetry: telemetry)
    }

    /// Creates a downloader that sends through `httpClient`, one the application already has
    /// (shared with the rest of its server): its pool, proxy, TLS and timeouts apply, and
    /// ``shutdown()`` leaves it running. Turn off its own redirects
    /// (`redirectConfiguration = .disallow`) for the downloader to follow them itself, through
    /// ``ImageDownloaderConfiguration/redirectHandler``. The configuration's
    /// ``ImageDownloaderConfiguration/addressPolicy`` needs the downloader's own clients: with
    /// one, every load fails with `WebImageError.Code.refusedAddress` rather than go
    /// unguarded; its proxy and TLS settings are the client's own business.
    public convenience init(
        configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration(), httpClient: HTTPClient,
        telemetry: Telemetry = .default
    ) {
        self.init(configuration: configuration, external: httpClient, telemetry: telemetry)
    }

    private init(configuration: ImageDownloaderConfiguration, external: HTTPClient?, telemetry: Telemetry) {
        self.configuration = configuration
        responsePolicy = DownloadResponsePolicy(configuration)
        scheduler = DownloadScheduler(
            slots: configuration.maximumConcurrentDownloads, order: configuration.executionOrder, politeness: configuration.hostPoliteness)
        headers = Locked(configuration.headers + (configuration.connectionIdleTimeout == .zero ? [("Connection", "close")] : []))
        partials = PartialDownloads(maximumTotalBytes: configuration.maximumResumableBytes)
        instruments = DownloaderInstruments(telemetry)
        var http = HTTPClient.Configuration()
        // Redirects are followed here, hop by hop (the hook, the address policy and the proxy
        // choice see each one), not inside the client.
        http.redirectConfiguration = .disallow
        http.timeout.read = TimeAmount(configuration.timeout)
        http.timeout.connect = TimeAmount(min(configuration.timeout, .seconds(10)))
        // At most 64 connections to one host: more rarely helps, and AsyncHTTPClient reserves
        // room for the limit in each host's pool, 12 MB over a crawl's 1,000 hosts at 256.
        http.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = min(64, max(8, configuration.maximumConcurrentDownloads))
        // The retry policy retries with backoff; the pool's own silent retries would only delay
        // a refused connection or a bad certificate until the connect timeout.
        http.connectionPool.retryConnectionEstablishment = false
        if let idle = configuration.connectionIdleTimeout, idle > .zero { http.connectionPool.idleTimeout = TimeAmount(idle) }
        http.decompression = .enabled(limit: .size(configuration.maximumBodySize))
        // The downloader makes its own client spans (``startSpan(for:transfer:)``): the client's
        // start on the event loop, outside the caller's trace, as roots of traces of their own.
        // Its default also made a span for every request with no tracer bootstrapped, and filling
        // in the no-op span cost more than the rest of the request.
        http.tracing.tracer = nil
        tracer = telemetry.activeTracer
        clients = DownloaderClients(configuration: configuration, base: http, external: external)
        logger = telemetry.logger("downloader")
        clientLogger = logger.logLevel <= .debug ? logger : nil
    }

    /// The shared downloader, with the default configuration, for the life of the process.
    public static let shared = ImageDownloader()

    /// Cancels every download and releases the HTTP clients the downloader made (not one that
    /// was handed to it).
    public func shutdown() async throws {
        cancelAllDownloads()
        try await clients.shutdown()
    }

    public func canLoad(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    /// Downloads `url`, sharing the transfer with every other caller of the same URL and options.
    /// The transfer waits in the queue at the highest priority among its callers; escalating a
    /// caller's task moves it up.
    public func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        // The token exists only once the transfer is joined; an escalation that comes first is
        // kept for it.
        let joined = Locked<(token: LoadToken?, raised: LoadRequestOptions.Priority?)>((nil, nil))
        let result = await withTaskPriorityEscalationHandler {
            var options = options
            // An escalation that came before the handler was installed shows only here.
            if let base = Task.basePriority, Task.currentPriority > base {
                options.priority = max(options.priority, LoadRequestOptions.Priority(Task.currentPriority))
            }
            return await withCancellableCallback(cancelled: .failure(WebImageError(.cancelled))) { resume in
                // Joined under the lock: an escalation that arrives meanwhile waits for the token
                // rather than leaving the transfer queued at its old priority until this task
                // runs again, where a queue that starts meanwhile would pass it over.
                let token = joined.withLock { joined in
                    if let raised = joined.raised { options.priority = max(options.priority, raised) }
                    let token = self.subscribe(url, options: options) { event in
                        switch event {
                        case .update(let update): events(update)
                        case .finished(let result): resume(result)
                        }
                    }
                    joined.token = token
                    return token
                }
                return { token.cancel() }
            }
        } onPriorityEscalated: { _, escalated in
            let priority = LoadRequestOptions.Priority(escalated)
            let token = joined.withLock { joined in
                joined.raised = max(joined.raised ?? priority, priority)
                return joined.token
            }
            token?.setPriority(priority)
        }
        return try result.get()
    }

    /// The callback side of ``loadData(_:options:events:)``: joins or starts the transfer and
    /// returns this caller's hold on it.
    package func subscribe(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (TransferEvent) -> Void) -> LoadToken {
        let key = DownloadTransfer.Key(url: url, options: options)
        let subscriber = DownloadTransfer.Subscriber(priority: options.priority, wantsPartial: options.progressive, deliver: events)
        let (transfer, id) = scheduler.join(key, options: options, subscriber: subscriber)
        startWaitingTransfers()
        // The token holds the downloader strongly: the downloader never holds tokens, so there is
        // no cycle, and a weak reference would give the downloader a side table that
        // LeakSanitizer reports as a leak whenever the downloader (the shared one) lives to exit.
        return LoadToken(
            onCancel: { if self.scheduler.leave(id, from: transfer) { transfer.cancel() } },
            onPriorityChange: { priority in self.scheduler.setPriority(priority, of: id, in: transfer) }
        )
    }

    /// Sets a header sent with every later request; nil removes it.
    public func setValue(_ value: String?, forHTTPHeaderField field: String) {
        headers.withLock { headers in
            headers.removeAll { $0.name.equalsIgnoringASCIICase(field) }
            if let value { headers.append((field, value)) }
        }
    }

    /// The headers sent with every request.
    public var httpHeaders: [(name: String, value: String)] {
        headers.withLock { $0 }
    }

    /// A new stream of every transfer's events from now on; each call gets its own stream.
    public func events() -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream<DownloadEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = observers.withLock { observers in
            observers.next += 1
            observers.continuations[observers.next] = continuation
            return observers.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.observers.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    private func announce(_ event: DownloadEvent) {
        for continuation in observers.withLock({ Array($0.continuations.values) }) { continuation.yield(event) }
    }

    /// Cancels every caller of every download: each load throws
    /// `WebImageError.Code.cancelled` (as SDWebImage calls every completion block with
    /// `SDWebImageErrorCancelled`), so no caller waits for a download that will not come.
    public func cancelAllDownloads() {
        let transfers = scheduler.removeAll()
        let cancelled = TransferEvent.finished(.failure(WebImageError(.cancelled, "the downloader cancelled every download")))
        for transfer in transfers {
            let subscribers = transfer.state.withLock { $0.subscribers.removeAll() }
            transfer.cancel()
            for subscriber in subscribers { subscriber.deliver(cancelled) }
        }
    }

    /// While suspended, queued downloads do not start; running ones go on.
    public var isSuspended: Bool {
        get { scheduler.isSuspended }
        set {
            scheduler.isSuspended = newValue
            startWaitingTransfers()
        }
    }

    /// The number of transfers running or waiting.
    public var currentDownloadCount: Int {
        scheduler.count
    }

    // MARK: - Scheduling

    private func startWaitingTransfers() {
        guard let wake = scheduler.startWaiting({ start($0) }) else { return }
        // A host's rate or hold keeps a transfer waiting: look again when it is over. Nothing
        // cancels the timer; it holds the downloader until it goes off.
        Task.detached { [self] in
            try? await Task.sleep(until: wake, clock: .continuous)
            scheduler.wakeDue(wake)
            startWaitingTransfers()
        }
    }

    // MARK: - The transfer

    /// Starts a transfer taken off the queue: its attempts run in one task of its own, whose end
    /// gives every caller the result. One cancelled while it waited ends at once.
    private func start(_ transfer: DownloadTransfer) {
        transfer.timeline.withLock { $0.started = .now }
        announce(.started(transfer.key.url))
        let launched = transfer.launch { [self] in complete(transfer, await run(transfer)) }
        if !launched { complete(transfer, .failure(WebImageError(.cancelled))) }
    }

    /// The transfer's attempts. A failure the retry policy retries waits out its back-off, then
    /// the next attempt begins; cancelling the task (every caller left) ends whichever step runs,
    /// the request modifier, a request or a back-off, as `.cancelled`, never retried.
    private func run(_ transfer: DownloadTransfer) async -> Result<LoadedData, WebImageError> {
        var number = 0
        while true {
            let failure: DownloadResponsePolicy.Refused
            switch await attempt(transfer, number: number) {
            case .success(let loaded): return .success(loaded)
            case .failure(let failed): failure = failed
            }
            if Task.isCancelled { return .failure(WebImageError(.cancelled)) }
            let error = failure.error
            if let retryAfter = failure.retryAfter, error.code == .badStatus(429) || error.code == .badStatus(503) {
                scheduler.hold(hostOf: transfer, for: retryAfter)
            }
            guard
                let delay = responsePolicy.retryDelay(
                    after: error, attempt: number, idempotent: transfer.key.request.isIdempotent, retryAfter: failure.retryAfter,
                    policy: transfer.key.request.retryPolicy)
            else { return .failure(error) }
            logger.debug("retrying", metadata: ["url": "\(transfer.key.url)", "error": "\(error.code)", "attempt": "\(number + 1)"])
            do {
                try await Task.sleep(for: delay)
            } catch {
                return .failure(WebImageError(.cancelled))
            }
            number += 1
        }
    }

    /// One attempt: its request, through the request modifier if there is one, and every hop it
    /// takes (redirects, a Basic challenge answered) to a checked body or a failure.
    private func attempt(_ transfer: DownloadTransfer, number: Int) async -> Result<LoadedData, DownloadResponsePolicy.Refused> {
        let url = transfer.key.url
        transfer.timeline.withLock { $0.attempts += 1 }
        // A conditional request asks whether the cached copy is current: it never resumes.
        let resumable = transfer.key.isResumable ? partials.take(url) : nil
        var prepared = DownloadRequest(
            url: url, headers: requestHeaders(for: transfer), method: transfer.key.request.method, body: transfer.key.request.body)
        if let resumable {
            prepared.headers.append(("Range", "bytes=\(resumable.data.count)-"))
            prepared.headers.append(("If-Range", resumable.validator))
        }
        if let modifier = transfer.key.requestModifier?.modify ?? configuration.requestModifier {
            guard let modified = await modifier(prepared) else {
                return .failure(
                    .init(
                        error: WebImageError(.rejected, "the request modifier cancelled \(url.absoluteString)", refusal: .requestModifier),
                        retryAfter: nil))
            }
            // A modifier that ignores cancellation returns its request anyway: nothing goes out then.
            guard !Task.isCancelled else { return .failure(.init(error: WebImageError(.cancelled), retryAfter: nil)) }
            prepared = modified
        }
        var hop = Hop(request: prepared)
        while true {
            let collector = makeCollector(for: transfer, url: hop.request.url, resumable: resumable)
            let result = await send(hop, collector: collector, transfer: transfer)
            switch await judge(result, of: hop, collector: collector, transfer: transfer) {
            case .next(let next): hop = next
            case .ended(let outcome): return outcome
            }
        }
    }

    /// One request of an attempt: the first, or one made to follow a redirect.
    private struct Hop {
        var request: DownloadRequest
        /// Redirects followed before this request.
        var redirects = 0
        /// The URLs that redirected so far, to tell a cycle.
        var visited: [URL] = []
    }

    /// Where a hop leads: to another (a redirect, a challenge answered), or to the attempt's end.
    private enum HopOutcome {
        case next(Hop)
        case ended(Result<LoadedData, DownloadResponsePolicy.Refused>)
    }

    /// Sends one hop's request; the response's head and pieces go to `collector` on the event
    /// loop. Cancelling the task cancels the request, which then fails as cancelled.
    private func send(_ hop: Hop, collector: BodyCollector, transfer: DownloadTransfer) async -> Result<Data, any Error> {
        let url = hop.request.url
        let span = startSpan(for: hop.request, transfer: transfer)
        let request: HTTPClient.Request
        let chosen: HTTPClient
        do {
            try checkAddressPolicy(url)
            let (client, tls) = try clients.client(for: url, allowsInvalidCertificates: transfer.key.allowsInvalidCertificates)
            var built = try HTTPClient.Request(
                url: url.absoluteString, method: HTTPMethod(rawValue: hop.request.method.uppercased()),
                headers: HTTPHeaders(hop.request.headers), body: hop.request.body.map { .bytes($0) })
            if let tls { built.tlsConfiguration = tls }
            if let tracer, let span { tracer.inject(span.context, into: &built.headers, using: TraceHeaderInjector()) }
            request = built
            chosen = client
        } catch {
            span?.fail(error)
            span?.end()
            return .failure(error)
        }
        let deadline = transfer.key.request.timeout.map { NIODeadline.now() + TimeAmount($0) }
        let task = chosen.execute(request: request, delegate: collector, eventLoop: .indifferent, deadline: deadline, logger: clientLogger)
        let result: Result<Data, any Error>
        do {
            result = .success(
                try await withTaskCancellationHandler {
                    try await task.get()
                } onCancel: {
                    task.cancel()
                })
        } catch {
            result = .failure(error)
        }
        if let span { Self.end(span, result: result, status: collector.statusCode) }
        return result
    }

    /// A client span for one request, beneath the trace of the caller that started the transfer
    /// (OpenTelemetry's HTTP client conventions; the path without its query, which may carry a
    /// token); nil without a tracer.
    private func startSpan(for request: DownloadRequest, transfer: DownloadTransfer) -> (any Span)? {
        guard let tracer else { return nil }
        let method = request.method.uppercased()
        let span = tracer.startSpan(method, context: transfer.traceContext ?? .topLevel, ofKind: .client)
        span.attributes["http.request.method"] = method
        span.attributes["server.address"] = request.url.host ?? ""
        if let port = request.url.port { span.attributes["server.port"] = port }
        span.attributes["url.scheme"] = request.url.scheme ?? ""
        span.attributes["url.path"] = request.url.path
        return span
    }

    /// Ends a request's span with its status; a failure or an error status (4xx, 5xx) marks it failed.
    private static func end(_ span: any Span, result: Result<Data, any Error>, status: Int?) {
        if let status { span.attributes["http.response.status_code"] = status }
        if case .failure(let error) = result {
            span.fail(error)
        } else if let status, status >= 400 {
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    /// Refuses, before any connection, a URL whose host the address policy refuses by name or
    /// whose host is a refused address; the guard judges names after resolving them.
    private func checkAddressPolicy(_ url: URL) throws(WebImageError) {
        guard let policy = configuration.addressPolicy, let host = url.host else { return }
        if let refusal = policy.refusalBeforeLookup(of: host) { throw refusal }
    }

    /// Judges the end of one hop: a redirect to follow, a challenge to answer, a complete image,
    /// or a failure (a certificate failure with the reason the diagnosis finds).
    private func judge(_ result: Result<Data, any Error>, of hop: Hop, collector: BodyCollector, transfer: DownloadTransfer) async
        -> HopOutcome
    {
        let url = hop.request.url
        switch result {
        case .success(let body):
            if let redirect = collector.redirect { return follow(redirect, after: hop, transfer: transfer) }
            if let authorization = collector.answerToChallenge { return .next(answering(hop, with: authorization)) }
            guard let accepted = collector.accepted else {
                return .ended(
                    .failure(.init(error: WebImageError(.connectionLost, "\(url.absoluteString) sent no response head"), retryAfter: nil)))
            }
            do throws(WebImageError) {
                return .ended(.success(try checked(body, accepted: accepted, from: url, transfer: transfer)))
            } catch {
                return .ended(.failure(.init(error: error, retryAfter: nil)))
            }
        case .failure(let error):
            if let refusal = collector.refusal { return .ended(.failure(refusal)) }
            if let accepted = collector.accepted { keepPartial(collector.receivedSoFar, of: transfer, head: accepted.head) }
            var failure = classify(error, url: url)
            if DownloadResponsePolicy.isCertificateVerificationFailure(failure),
                let reason = await clients.explainCertificateFailure(for: url)
            {
                failure = WebImageError(.insecureConnection, reason, underlying: failure.underlyingError)
            }
            return .ended(.failure(.init(error: failure, retryAfter: nil)))
        }
    }

    /// A transport error as a library error; a connection the address guard refused or could
    /// not make is reported with the guard's reason, not the SOCKS reply code the client saw.
    private func classify(_ error: any Error, url: URL) -> WebImageError {
        if error is SOCKSError.ConnectionFailed, let egress = clients.egress, let host = url.host,
            let failure = egress.failure(host: host, port: url.effectivePort)
        {
            return failure
        }
        return DownloadResponsePolicy.classify(error, url: url)
    }

    /// Follows a redirect within the same attempt, after the limit, the hook and the cycle check.
    private func follow(_ redirect: BodyCollector.Redirect, after hop: Hop, transfer: DownloadTransfer) -> HopOutcome {
        let from = hop.request.url
        if transfer.key.handlesCookies { SharedCookies.store(from: redirect.head, for: from) }
        let target: URL
        switch RedirectRule.judge(
            from: from, to: redirect.target, status: redirect.head.statusCode, redirects: hop.redirects, visited: hop.visited,
            limit: configuration.maximumRedirects, original: transfer.key.url, handler: configuration.redirectHandler)
        {
        case .success(let judged): target = judged
        case .failure(let error): return .ended(.failure(.init(error: error, retryAfter: nil)))
        }
        var request = RedirectRule.follow(hop.request, to: target, status: redirect.head.statusCode)
        if transfer.key.handlesCookies {
            request.headers.removeAll { $0.name.equalsIgnoringASCIICase("Cookie") }
            request.headers += SharedCookies.headers(for: target)
        }
        return .next(Hop(request: request, redirects: hop.redirects + 1, visited: hop.visited + [from]))
    }

    /// Ends a transfer: metrics, the slot it held, events, and every caller's result.
    private func complete(_ transfer: DownloadTransfer, _ outcome: Result<LoadedData, WebImageError>) {
        let url = transfer.key.url
        let metrics = transfer.timeline.withLock { $0.metrics(endedAt: .now) }
        var result = outcome
        if case .success(var loaded) = result {
            loaded.metrics = metrics
            result = .success(loaded)
        }
        scheduler.ended(transfer)
        startWaitingTransfers()
        instruments.record(result, metrics: metrics)
        switch result {
        case .failure(let error) where error.code == .cancelled: announce(.stopped(url))
        case .failure(let error): announce(.finished(url, metrics, error: error))
        case .success: announce(.finished(url, metrics, error: nil))
        }
        transfer.finish(result)
    }

    /// The delegate that reads one attempt's response, with the downloader's rules for its head.
    private func makeCollector(for transfer: DownloadTransfer, url: URL, resumable: PartialDownloads.Partial?) -> BodyCollector {
        // Only what the closures need: the whole configuration (TLS, proxies, resolver, hooks)
        // would be copied and retained for every request.
        let responseModifier = configuration.responseModifier
        let pacer = configuration.minimumProgressInterval > 0 ? ProgressPacer(minimumInterval: configuration.minimumProgressInterval) : nil
        // A challenge is answered once per hop: a 401 to a request that carried the credentials
        // is the server's answer.
        let answersChallenge =
            !transfer.key.request.headers.contains { $0.name.equalsIgnoringASCIICase("Authorization") }
            && !challengedOrigins.withLock { $0.contains(Self.origin(of: url)) }
        return BodyCollector(
            url: url,
            challengeAnswer: answersChallenge ? credentials(for: url) : nil,
            maximumSize: configuration.maximumBodySize,
            judge: { [self] response in
                transfer.timeline.withLock { timeline in
                    timeline.firstByte = timeline.firstByte ?? .now
                    timeline.httpVersion = "HTTP/\(response.version.major).\(response.version.minor)"
                }
                announce(.receivedResponse(transfer.key.url, statusCode: Int(response.status.code)))
                var head = DownloadResponseHead(
                    statusCode: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) })
                if transfer.key.handlesCookies { SharedCookies.store(from: head, for: url) }
                if let modifier = transfer.key.responseModifier?.modify ?? responseModifier {
                    guard let modified = modifier(head) else {
                        return .failure(
                            .init(
                                error: WebImageError(
                                    .rejected, "the response modifier refused \(url.absoluteString)", refusal: .responseModifier),
                                retryAfter: nil))
                    }
                    head = modified
                }
                return responsePolicy.judge(head, url: url, conditional: transfer.key.validators != nil, resumable: resumable)
            },
            progress: { received, expected, snapshot in
                if let pacer, !pacer.shouldReport(received: received, expected: expected) { return }
                transfer.broadcast(.progress(received: Int64(received), expected: expected))
                if transfer.state.withLock({ $0.subscribers.wantsPartial }) {
                    transfer.broadcast(.partialData(LoadedData(data: snapshot(), url: url)))
                }
            })
    }

    /// Checks a complete body against what its head promised, decrypts it, and checks it is an
    /// image; `finalURL` is where it came from after redirects.
    private func checked(_ received: Data, accepted: DownloadResponsePolicy.Accepted, from finalURL: URL, transfer: DownloadTransfer)
        throws(WebImageError) -> LoadedData
    {
        let url = transfer.key.url
        let head = accepted.head
        if let expected = accepted.expected, Int64(received.count) != expected {
            keepPartial(received, of: transfer, head: head)
            throw WebImageError(.connectionLost, "\(url.absoluteString) ended after \(received.count) of \(expected) bytes")
        }
        transfer.timeline.withLock { $0.bytes = received.count }
        if let total = DownloadResponsePolicy.completeLength(head), received.count != total {
            throw WebImageError(.connectionLost, "\(url.absoluteString) resumed to \(received.count) of \(total) bytes")
        }
        var body = received
        if let decryptor = transfer.key.decryptor?.decrypt ?? configuration.decryptor {
            guard let decrypted = decryptor(body, head) else {
                throw WebImageError(.rejected, "the decryptor refused the bytes of \(url.absoluteString)", refusal: .decryptor)
            }
            body = decrypted
        }
        let contentType = head.header("Content-Type")
        try responsePolicy.checkIsImage(body, contentType: contentType, url: url)
        var loaded = LoadedData(
            data: body, url: finalURL, statusCode: head.statusCode, contentType: contentType,
            etag: head.header("ETag"), lastModified: head.header("Last-Modified"), cacheControl: head.header("Cache-Control"),
            expires: head.header("Expires"), date: head.header("Date"), age: head.header("Age")
        )
        for name in configuration.retainedResponseHeaders {
            let values = head.headers.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
            if !values.isEmpty { loaded.retainedHeaders[name.lowercased()] = values }
        }
        return loaded
    }

    /// Keeps the bytes of an interrupted download for a later attempt to continue.
    private func keepPartial(_ data: Data, of transfer: DownloadTransfer, head: DownloadResponseHead) {
        if transfer.key.isResumable { partials.keep(data, for: transfer.key.url, head: head) }
    }

    /// The shared headers (each replaced by the request's own of the same name, which follow),
    /// credentials, cookies, and the validators of a conditional request.
    private func requestHeaders(for transfer: DownloadTransfer) -> [(name: String, value: String)] {
        let own = transfer.key.request.headers
        var headers = httpHeaders.filter { shared in !own.contains { $0.name.equalsIgnoringASCIICase(shared.name) } } + own
        if challengedOrigins.withLock({ $0.contains(Self.origin(of: transfer.key.url)) }),
            let authorization = credentials(for: transfer.key.url)
        {
            headers.append(("Authorization", authorization))
        }
        if transfer.key.handlesCookies { headers += SharedCookies.headers(for: transfer.key.url) }
        if let etag = transfer.key.validators?.etag { headers.append(("If-None-Match", etag)) }
        if let lastModified = transfer.key.validators?.lastModified { headers.append(("If-Modified-Since", lastModified)) }
        return headers
    }

    /// The `Authorization` header the configured credentials give for `url`, when they may be
    /// sent there (``ImageDownloaderConfiguration/credentialHosts``, HTTPS unless allowed).
    private func credentials(for url: URL) -> String? {
        guard let username = configuration.username, let password = configuration.password, let host = url.host?.lowercased() else {
            return nil
        }
        guard url.scheme?.lowercased() == "https" || configuration.sendsCredentialsOverHTTP else { return nil }
        guard configuration.credentialHosts.isEmpty || configuration.credentialHosts.contains(where: { $0.lowercased() == host }) else {
            return nil
        }
        return BasicChallenge.authorization(username: username, password: password)
    }

    /// `scheme://host:port`, the origin a challenge's answer is remembered for.
    private static func origin(of url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.effectivePort)"
    }

    /// Answers a Basic challenge: the same request again, with the credentials, which the
    /// origin then gets at once on later requests.
    private func answering(_ hop: Hop, with authorization: String) -> Hop {
        challengedOrigins.withLock { _ = $0.insert(Self.origin(of: hop.request.url)) }
        var answered = hop
        answered.request.headers.removeAll { $0.name.equalsIgnoringASCIICase("Authorization") }
        answered.request.headers.append(("Authorization", authorization))
        return answered
    }
}

/// Leaves out progress reports closer than `minimumInterval` (a fraction of the expected length)
/// to the last one sent, as SDWebImage's `minimumProgressInterval`; the first and the last
/// (all bytes in) are always sent, and so is every report when the length is unknown. Made only
/// when the interval is set.
final class ProgressPacer: Sendable {
    private let minimumInterval: Double
    private let lastReported = Locked<Double?>(nil)

    init(minimumInterval: Double) {
        self.minimumInterval = minimumInterval
    }

    func shouldReport(received: Int, expected: Int64?) -> Bool {
        guard let expected, expected > 0 else { return true }
        let fraction = Double(received) / Double(expected)
        return lastReported.withLock { last in
            guard last == nil || fraction >= 1 || fraction - last! >= minimumInterval else { return false }
            last = fraction
            return true
        }
    }
}

/// Writes a trace's propagation headers (`traceparent`, `tracestate`) into a request's.
private struct TraceHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: key, value: value)
    }
}
