public import Foundation

extension ImageManager {
    /// Loads an image and returns the last one the load delivers: with `.refreshCached`, the
    /// new image when the origin sent one, else the cached one. A memory hit returns without
    /// suspending.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled (which cancels this
    ///   caller's share of the load) or ``cancelAll()`` cancels the load, else a `WebImageError`.
    public func image(for url: URL?, options: LoadOptions = [], context: LoadContext = LoadContext()) async throws -> ImageResult {
        // The hit is looked for before a request is made: making one copies the context.
        if let url, let hit = memoryHit(url, options: options, context: context) { return hit }
        return try await load(ImageRequest(url: url, options: options, context: context))
    }

    /// ``image(for:options:context:)`` for a full request (method, headers, body, timeout).
    public func image(for request: ImageRequest) async throws -> ImageResult {
        if let url = request.url, let hit = memoryHit(url, options: request.options, context: request.context) { return hit }
        return try await load(request)
    }

    /// A load past the memory hit: the last image it delivers.
    func load(_ request: ImageRequest, bytesOnly: Bool = false) async throws -> ImageResult {
        typealias Outcome = Result<ImageResult, any Error>
        let last = Locked<ImageResult?>(nil)
        let result = await withCancellableCallback(cancelled: Outcome.failure(CancellationError())) {
            (resume: @escaping @Sendable (Outcome) -> Void) -> (@Sendable () -> Void)? in
            // Cancelled from outside (`cancelAll()`, the operation handed to a target): the
            // handler is silent from then on, so the cancellation is the answer.
            let operation: LoadOperation? = start(request, bytesOnly: bytesOnly, cancelled: { resume(.failure(CancellationError())) }) {
                event in
                switch event {
                case .progress:
                    break
                case .image(let result, let isPartial):
                    if !isPartial { last.withLock { $0 = result } }
                case .finished(let outcome?):
                    resume(outcome.mapError { $0 as any Error })
                case .finished(nil):
                    // A revalidation that found the cached image current: the last one delivered.
                    resume(last.withLock { $0 }.map { .success($0) } ?? .failure(WebImageError(.notModified)))
                }
            }
            guard let operation else { return nil }
            return { operation.cancel() }
        }
        return try result.get()
    }

    /// Every image a load delivers, in order: partial images of a progressive load
    /// (``ImageResult/isFinished`` false), the cached image before a `.refreshCached`
    /// revalidation, then the final one. The stream ends after the last; ending iteration
    /// cancels the load, and ``cancelAll()`` ends the stream with `CancellationError`.
    public func images(for request: ImageRequest) -> AsyncThrowingStream<ImageResult, any Error> {
        AsyncThrowingStream { continuation in
            let operation = start(request, cancelled: { continuation.finish(throwing: CancellationError()) }) { event in
                switch event {
                case .progress:
                    break
                case .image(let result, _):
                    continuation.yield(result)
                case .finished(let outcome):
                    switch outcome {
                    case .success(let result):
                        continuation.yield(result)
                        continuation.finish()
                    case .failure(let error):
                        continuation.finish(throwing: error)
                    case nil:
                        continuation.finish()
                    }
                }
            }
            continuation.onTermination = { termination in
                if case .cancelled = termination { operation?.cancel() }
            }
        }
    }

    /// The memory hit that lets the async API return without a continuation; nil when the
    /// load needs the full path.
    func memoryHit(_ url: URL, options: LoadOptions, context: LoadContext) -> ImageResult? {
        guard optionsProcessor == nil, options.isDisjoint(with: [.fromLoaderOnly, .refreshCached, .queryMemoryData]),
            !configuration.cacheFreshness.respectsCacheControl,
            (context.queryCacheType ?? .all).includesMemory,
            options.contains(.retryFailed) || !failedURLs.contains(url),
            let image = (context.imageCache ?? cache).memoryImage(for: variantKey(for: url, context: context))
        else { return nil }
        return ImageResult(image: image, data: nil, cacheType: .memory, url: url)
    }
}
