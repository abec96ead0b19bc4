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
        let probe = memoryProbe(url, options: options, context: context)
        if case .hit(let hit) = probe { return hit }
        return try await load(ImageRequest(url: url, options: options, context: context), memoryProbed: probe.missed)
    }

    /// ``image(for:options:context:)`` for a full request (method, headers, body, timeout).
    public func image(for request: ImageRequest) async throws -> ImageResult {
        let probe = memoryProbe(request.url, options: request.options, context: request.context)
        if case .hit(let hit) = probe { return hit }
        return try await load(request, memoryProbed: probe.missed)
    }

    /// A load past the memory hit: the last image it delivers. `memoryProbed`: the caller's
    /// ``memoryProbe(_:options:context:)`` missed, so the load does not look there again.
    ///
    /// The async path, which the callback API wraps: the load is prepared and joined on this
    /// thread, and this task awaits the shared load's ``events(of:)`` with no callback queue
    /// or handler between. Cancelling the task ends the events, which cancels this caller's
    /// share of the load.
    func load(_ source: ImageRequest, bytesOnly: Bool = false, memoryProbed: Bool = false) async throws -> ImageResult {
        let request: Request
        switch prepare(source, bytesOnly: bytesOnly, memoryProbed: memoryProbed) {
        case .ended(let result, _): return try result.get()
        case .join(let joined): request = joined
        }
        let (operation, events) = events(of: request)
        var last: ImageResult?
        for await event in events {
            switch event {
            case .progress:
                break
            case .image(let result, let isPartial):
                if !isPartial { last = result }
            case .finished(let outcome):
                guard operation.finish() else { throw CancellationError() }
                // Nil: a revalidation that found the cached image current, the last one delivered.
                guard let outcome else {
                    guard let last else { throw WebImageError(.notModified) }
                    return last
                }
                return try outcome.get()
            }
        }
        // The events ended before the last: the task or the operation was cancelled.
        throw CancellationError()
    }

    /// Every image a load delivers, in order: partial images of a progressive load
    /// (``ImageResult/isFinished`` false), the cached image before a `.refreshCached`
    /// revalidation, then the final one. The stream ends after the last; ending iteration
    /// cancels the load, and ``cancelAll()`` ends the stream with `CancellationError`.
    public func images(for request: ImageRequest) -> AsyncThrowingStream<ImageResult, any Error> {
        AsyncThrowingStream { continuation in
            let resolved: Request
            switch prepare(request, bytesOnly: false, memoryProbed: false) {
            case .ended(let result, _):
                Self.end(continuation, with: result)
                return
            case .join(let joined):
                resolved = joined
            }
            let operation = register(resolved.url) { continuation.finish(throwing: CancellationError()) }
            join(resolved, operation: operation) { event in
                switch event {
                case .progress:
                    break
                case .image(let result, _):
                    if !operation.isFinished { continuation.yield(result) }
                case .finished(let outcome):
                    guard operation.finish() else { return }
                    Self.end(continuation, with: outcome)
                }
            }
            continuation.onTermination = { termination in
                if case .cancelled = termination { operation.cancel() }
            }
        }
    }

    /// Ends a stream of images with a load's last outcome: its image, or its error; nil (a
    /// revalidation that found the image current) ends it with nothing more.
    private static func end(
        _ continuation: AsyncThrowingStream<ImageResult, any Error>.Continuation, with outcome: Result<ImageResult, WebImageError>?
    ) {
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

    /// What a caller's look in the memory tier, before any request is made, found.
    enum MemoryProbe {
        /// The image: the load ends here, with no task and no continuation.
        case hit(ImageResult)
        /// Not there: the load does not look again (``Request/memoryProbed``).
        case missed
        /// Not looked at: the load's options or the manager's policies need the full path.
        case skipped

        var missed: Bool {
            if case .missed = self { return true }
            return false
        }
    }

    /// The memory hit that lets the async API return without a continuation, and the callback
    /// API before it returns.
    func memoryProbe(_ url: URL?, options: LoadOptions, context: LoadContext) -> MemoryProbe {
        guard let url, optionsProcessor == nil, options.isDisjoint(with: [.fromLoaderOnly, .refreshCached, .queryMemoryData]),
            !configuration.cacheFreshness.respectsCacheControl,
            (context.queryCacheType ?? .all).includesMemory,
            options.contains(.retryFailed) || !failedURLs.contains(url)
        else { return .skipped }
        guard let image = (context.imageCache ?? cache).memoryImage(for: variantKey(for: url, context: context)) else { return .missed }
        return .hit(ImageResult(image: image, data: nil, cacheType: .memory, url: url))
    }
}
