public import Foundation
import CoreMetrics
import Logging
import Tracing

/// URL in, image out (SDWebImage's `SDWebImageManager`): memory cache, then disk cache, then the
/// loader; decode; transform; store; deliver.
///
/// Every load of the same variant shares one cache query, one download, one decode and one
/// transform, however many callers ask at once; the shared work stops only when every caller
/// has cancelled. A memory hit is answered on the caller's thread before `loadImage` returns,
/// with no task and no actor hop.
///
/// ```swift
/// let result = try await ImageManager.shared.image(for: url, context: context)
/// ```
public final class ImageManager: Sendable {
    /// Reports bytes received so far, the expected total when known, and the URL. (The public
    /// entry points spell the closure types out, so that a reader sees them where they are used.)
    package typealias ProgressHandler = @Sendable (_ received: Int64, _ expected: Int64?, _ url: URL) -> Void
    /// Receives each image the load delivers (see ``loadImage(with:options:context:progress:completed:)``), or its error.
    package typealias CompletionHandler = @Sendable (Result<ImageResult, WebImageError>) -> Void

    /// The manager targets and the prefetcher use unless told otherwise: ``ImageCache/shared``
    /// and the HTTP, `file:` and `data:` loaders.
    public static let shared = ImageManager()

    /// The cache queried first and stored into.
    public let cache: any ImageCaching
    /// The loader of what the cache misses.
    public let loader: any ImageLoader
    /// The decoders.
    public let coders: CodersManager
    /// Applied to every image unless a load's context names its own.
    public var transformer: (any ImageTransformer)? { configuration.transformer }
    /// Makes cache keys from URLs unless a load's context names its own.
    public var cacheKeyFilter: CacheKeyFilter? { configuration.cacheKeyFilter }
    /// Chooses the bytes stored on disk unless a load's context names its own.
    public var cacheSerializer: CacheSerializer? { configuration.cacheSerializer }
    /// Rewrites every load's options and context.
    public var optionsProcessor: OptionsProcessor? { configuration.optionsProcessor }
    /// Decides whether to download and whether to block failed URLs.
    public var delegate: (any ImageManagerDelegate)? { configuration.delegate }
    /// Bounds checked before decoding.
    public var decodeLimits: DecodeLimits { configuration.decodeLimits }
    /// URLs whose load failed for good, bounded and aged by the configuration.
    public let failedURLs: FailedURLs

    let workPool: WorkPool
    let logger: Logger
    /// The background revalidations running (`stale-while-revalidate`), by original key, so that
    /// a burst of hits on a stale entry sends one conditional request.
    let revalidations = Locked<[CacheKey: Task<Void, Never>]>([:])
    /// Counts the cache stores that failed (`MetricName.cacheStoreFailures`).
    let storeFailures: Counter
    /// `MetricName.decodeWarnings`, complete images and partial ones.
    let decodesWithWarnings: Counter
    let partialDecodes: Counter
    let sharedLoads = Locked(CoalescingTable<SharedLoadKey, SharedLoad>())
    private let running = Locked(Set<LoadOperation>())
    private let uniqueLoads = Locked(0)

    /// The policies the manager was created with.
    public let configuration: ImageManagerConfiguration

    /// A manager over the given parts, with the given policies; every default is what
    /// ``shared`` uses.
    public init(
        cache: any ImageCaching = ImageCache.shared,
        loader: any ImageLoader = LoadersManager(loaders: [DataURLLoader(), FileURLLoader(), ImageDownloader.shared]),
        coders: CodersManager = .shared,
        configuration: ImageManagerConfiguration,
        telemetry: Telemetry = .default
    ) {
        self.cache = cache
        self.loader = loader
        self.coders = coders
        self.configuration = configuration
        failedURLs = FailedURLs(capacity: configuration.failedURLCapacity, lifetime: configuration.failedURLLifetime)
        workPool = .shared
        logger = telemetry.logger("manager")
        storeFailures = telemetry.counter(.cacheStoreFailures)
        decodesWithWarnings = telemetry.counter(.decodeWarnings, dimensions: [("partial", "false")])
        partialDecodes = telemetry.counter(.decodeWarnings, dimensions: [("partial", "true")])
    }

    /// A manager over the given parts with each policy given apart (SDWebImage's properties):
    /// ``init(cache:loader:coders:configuration:telemetry:)`` with those in the configuration.
    public convenience init(
        cache: any ImageCaching = ImageCache.shared,
        loader: any ImageLoader = LoadersManager(loaders: [DataURLLoader(), FileURLLoader(), ImageDownloader.shared]),
        coders: CodersManager = .shared,
        transformer: (any ImageTransformer)? = nil,
        cacheKeyFilter: CacheKeyFilter? = nil,
        cacheSerializer: CacheSerializer? = nil,
        optionsProcessor: OptionsProcessor? = nil,
        delegate: (any ImageManagerDelegate)? = nil,
        decodeLimits: DecodeLimits = DecodeLimits(),
        telemetry: Telemetry = .default
    ) {
        self.init(
            cache: cache, loader: loader, coders: coders,
            configuration: ImageManagerConfiguration(
                transformer: transformer, cacheKeyFilter: cacheKeyFilter, cacheSerializer: cacheSerializer,
                optionsProcessor: optionsProcessor, delegate: delegate, decodeLimits: decodeLimits),
            telemetry: telemetry)
    }

    // MARK: - Keys

    /// The key of `url`'s original image: the filter's, else the URL's absolute string.
    public func cacheKey(for url: URL, context: LoadContext = LoadContext()) -> String {
        (context.cacheKeyFilter ?? cacheKeyFilter)?.key(url) ?? url.absoluteString
    }

    /// The key under which a load of `url` with `context` stores its result: the original key
    /// plus the thumbnail size, the transformer's key and the scale factor.
    public func variantKey(for url: URL, context: LoadContext = LoadContext()) -> CacheKey {
        CacheKey(
            cacheKey(for: url, context: context), thumbnail: context.thumbnail,
            transformerKey: (context.imageTransformer ?? transformer)?.transformerKey, scale: context.imageScaleFactor)
    }

    // MARK: - Callback API

    /// Loads an image (SDWebImage's `loadImage(with:options:context:progress:completed:)`).
    ///
    /// `completed` is called once with the result, except that a progressive load first
    /// delivers partial images (``ImageResult/isFinished`` false), and `.refreshCached` first
    /// delivers the cached image, then the new one only if the origin sent one (a 304 ends the
    /// load without a second call). It runs on the context's ``CallbackQueue`` (default: inline,
    /// so a memory hit calls back before this returns). A cancelled load never calls it.
    ///
    /// - Returns: The operation, to cancel; nil when the load already ended (memory hit, bad URL).
    @discardableResult
    public func loadImage(
        with url: URL?,
        options: LoadOptions = [],
        context: LoadContext = LoadContext(),
        progress: (@Sendable (_ received: Int64, _ expected: Int64?, _ url: URL) -> Void)? = nil,
        completed: @escaping @Sendable (Result<ImageResult, WebImageError>) -> Void
    ) -> LoadOperation? {
        // The hit is answered before a request is made: making one copies the context.
        let probe = memoryProbe(url, options: options, context: context)
        if case .hit(let hit) = probe {
            deliver(hit, on: context.callbackQueue, to: completed)
            return nil
        }
        return load(
            ImageRequest(url: url, options: options, context: context), memoryProbed: probe.missed, progress: progress, completed: completed
        )
    }

    /// Loads the image a request names: ``loadImage(with:options:context:progress:completed:)``
    /// for a full request (method, headers, body, timeout).
    @discardableResult
    public func loadImage(
        with request: ImageRequest, progress: (@Sendable (_ received: Int64, _ expected: Int64?, _ url: URL) -> Void)? = nil,
        completed: @escaping @Sendable (Result<ImageResult, WebImageError>) -> Void
    )
        -> LoadOperation?
    {
        let probe = memoryProbe(request.url, options: request.options, context: request.context)
        if case .hit(let hit) = probe {
            deliver(hit, on: request.context.callbackQueue, to: completed)
            return nil
        }
        return load(request, memoryProbed: probe.missed, progress: progress, completed: completed)
    }

    /// The hot path: no closure, no operation, no callback queue hop unless one is asked for.
    private func deliver(_ hit: ImageResult, on queue: CallbackQueue?, to completed: @escaping CompletionHandler) {
        if let queue { queue.run { completed(.success(hit)) } } else { completed(.success(hit)) }
    }

    /// A callback load past the memory hit.
    private func load(_ request: ImageRequest, memoryProbed: Bool, progress: ProgressHandler?, completed: @escaping CompletionHandler)
        -> LoadOperation?
    {
        let url = request.url
        return start(request, memoryProbed: memoryProbed, progress: progress != nil) { event in
            switch event {
            case .progress(let received, let expected):
                if let progress, let url { progress(received, expected, url) }
            case .image(let result, _):
                completed(.success(result))
            case .finished(let result):
                if let result { completed(result) }
            }
        }
    }

    // MARK: - State

    /// Whether any load is running.
    public var isRunning: Bool {
        running.withLock { !$0.isEmpty }
    }

    /// The loads running now.
    public var runningOperations: [LoadOperation] {
        running.withLock { Array($0) }
    }

    /// Cancels every running load.
    public func cancelAll() {
        for operation in running.withLock({ Array($0) }) { operation.cancel() }
    }

    // MARK: - Internals

    /// Everything a load resolved from its options and context, before it starts.
    struct Request: Sendable {
        let url: URL
        let options: LoadOptions
        let context: LoadContext
        let key: CacheKey
        let cache: any ImageCaching
        let loader: any ImageLoader
        let coders: CodersManager
        let transformer: (any ImageTransformer)?
        let serializer: CacheSerializer?
        /// What the loader is asked for: the request's HTTP parts and the options and context
        /// keys that shape a download. Made once: a request is copied into every step of a load.
        let requestOptions: LoadRequestOptions
        /// Whether the caller already looked for this key in the memory tier and missed: the
        /// memory tier is probed once per load, by the caller or by the load.
        let memoryProbed: Bool

        var queryCacheType: ImageCacheType { context.queryCacheType ?? .all }
        var storeCacheType: ImageCacheType { context.storeCacheType ?? .all }
        var originalQueryCacheType: ImageCacheType { context.originalQueryCacheType ?? .disk }
        var originalStoreCacheType: ImageCacheType { context.originalStoreCacheType ?? .disk }
        var callbackQueue: CallbackQueue { context.callbackQueue ?? .inline }
        /// The decode pool's order for this load: a prefetch's `.lowPriority` decodes wait
        /// behind those of images someone is looking at.
        var workPriority: WorkPool.Priority { WorkPool.Priority(rawValue: options.priority.rawValue) ?? .normal }

    }

    /// What a load comes to before it joins a shared load.
    enum Preparation {
        /// Ended at once: a nil, empty or blocked URL, or a synchronous hit; the queue is the
        /// load's callback queue, for the callback API.
        case ended(Result<ImageResult, WebImageError>, CallbackQueue)
        /// Goes on: join the shared load of this resolved request.
        case join(Request)
    }

    /// The synchronous part of every load, the callback API's, the async API's, targets' and the
    /// prefetcher's: the URL checked, the options processor run, the failed list consulted, the
    /// request resolved and a synchronous hit taken.
    ///
    /// `bytesOnly` (``data(for:)``): the original's key and no transformer, so the bytes are
    /// cached and shared under the key a decoding load of the same URL keeps its original under.
    func prepare(_ source: ImageRequest, bytesOnly: Bool, memoryProbed: Bool) -> Preparation {
        guard let url = source.url, !url.absoluteString.isEmpty else {
            return .ended(.failure(WebImageError(.invalidURL, "the URL is nil or empty")), source.context.callbackQueue ?? .inline)
        }
        var source = source
        (source.options, source.context) =
            optionsProcessor?.process(url, source.options, source.context) ?? (source.options, source.context)
        let queue = source.context.callbackQueue ?? .inline
        if !source.options.contains(.retryFailed), failedURLs.contains(url) {
            return .ended(.failure(WebImageError(.blockedURL, "\(url.absoluteString) failed before; load it with .retryFailed")), queue)
        }
        let request = resolve(url, source: source, bytesOnly: bytesOnly, memoryProbed: memoryProbed)
        if let hit = synchronousHit(request) {
            if source.options.contains(.retryFailed) { failedURLs.remove(url) }
            return .ended(.success(hit), queue)
        }
        return .join(request)
    }

    /// A caller's operation, counted in ``runningOperations`` until it ends. `cancelled` runs
    /// once if it is cancelled, by whoever cancels it (its caller, ``cancelAll()``, a target):
    /// nothing is delivered after that, so a caller that waits for the last event (the async
    /// API) learns of the end from it.
    func register(_ url: URL, cancelled: (@Sendable () -> Void)? = nil) -> LoadOperation {
        // The closures of a load hold the manager's tables, not the manager: no weak reference to
        // it is ever made. (A weak reference gives the manager a side table that LeakSanitizer,
        // which cannot read the object's encoded pointer to it, reported as lost when a process
        // exited with the manager alive: `webimage serve` stopped with a request in flight.) The
        // table and the operation refer to each other only until the operation ends.
        let running = running
        let operation = LoadOperation(url: url) { operation in
            _ = running.withLock { $0.remove(operation) }
            if operation.isCancelled { cancelled?() }
        }
        running.withLock { _ = $0.insert(operation) }
        return operation
    }

    /// Joins the shared load of `request` (or, for a memory hit that wants its bytes too, reads
    /// them): `deliver` gets this caller's events as the shared load sends them.
    func join(_ request: Request, operation: LoadOperation, deliver: @escaping @Sendable (SharedLoadEvent) -> Void) {
        if shouldQueryMemoryData(request), let image = request.cache.memoryImage(for: request.key) {
            queryMemoryData(request, image: image, operation: operation, deliver: deliver)
        } else {
            subscribe(request, operation: operation, deliver: deliver)
        }
    }

    /// The callback API's load (and targets' and the prefetcher's; ``data(for:)`` is async only),
    /// a thin wrapper over the async path: ``prepare(_:bytesOnly:memoryProbed:)`` and the join on
    /// this thread, as every API's load (so loads made together share one download, and a
    /// `cancel()` right after this returns stops this caller's share), then a task that awaits
    /// the load's ``events(of:)`` and hands each to `handler` on the load's callback queue, never
    /// after the operation is cancelled. A load that ended at once is answered on this thread
    /// (an inline hit calls back before this returns); nil then.
    ///
    /// `progress`: whether the handler wants the progress events (only the callback API with a
    /// progress handler does); each is a wake of the task, so they are left out at the source.
    func start(
        _ source: ImageRequest, memoryProbed: Bool = false, progress: Bool = false,
        handler: @escaping @Sendable (SharedLoadEvent) -> Void
    ) -> LoadOperation? {
        switch prepare(source, bytesOnly: false, memoryProbed: memoryProbed) {
        case .ended(let result, let queue):
            queue.run { handler(.finished(result)) }
            return nil
        case .join(let request):
            let (operation, events) = events(of: request, progress: progress)
            let queue = request.callbackQueue
            Task(priority: request.options.priority.taskPriority) {
                for await event in events { Self.deliver(event, to: operation, queue: queue, handler: handler) }
            }
            return operation
        }
    }

    /// A prepared load, joined on this thread: its operation, and the events the shared load
    /// sends this caller as an async sequence that ends after the last (or at once when the
    /// operation is cancelled, by its caller or ``cancelAll()``). Progress events only when
    /// `progress` asks for them.
    func events(of request: Request, progress: Bool = false) -> (LoadOperation, AsyncStream<SharedLoadEvent>) {
        let (events, continuation) = AsyncStream<SharedLoadEvent>.makeStream()
        let operation = register(request.url) { continuation.finish() }
        join(request, operation: operation) { event in
            switch event {
            case .progress: if progress { continuation.yield(event) }
            case .image: continuation.yield(event)
            case .finished:
                continuation.yield(event)
                continuation.finish()
            }
        }
        // The awaiting task was cancelled (the callback API's task never is).
        continuation.onTermination = { termination in
            if case .cancelled = termination { operation.cancel() }
        }
        return (operation, events)
    }

    func resolve(_ url: URL, source: ImageRequest, bytesOnly: Bool, memoryProbed: Bool = false) -> Request {
        let (options, context) = (source.options, source.context)
        let requestOptions = LoadRequestOptions(
            priority: options.priority, progressive: options.contains(.progressiveLoad),
            handlesCookies: options.contains(.handleCookies), allowsInvalidCertificates: options.contains(.allowInvalidSSLCertificates),
            requestModifier: context.downloadRequestModifier, responseModifier: context.downloadResponseModifier,
            decryptor: context.downloadDecryptor, method: source.method, headers: source.headers, body: source.body,
            timeout: source.timeout, values: context.customValues,
            // Read here, on the caller's task: the load goes on from cache queues and tasks of its own.
            traceContext: ServiceContext.current
        )
        return Request(
            url: url, options: options, context: context,
            key: bytesOnly ? CacheKey(cacheKey(for: url, context: context)) : variantKey(for: url, context: context),
            cache: context.imageCache ?? cache, loader: context.imageLoader ?? loader, coders: context.imageCoders ?? coders,
            transformer: bytesOnly ? nil : context.imageTransformer ?? transformer, serializer: context.cacheSerializer ?? cacheSerializer,
            requestOptions: requestOptions, memoryProbed: memoryProbed
        )
    }

    /// A memory hit from any cache's memory facet (or, with `.queryDiskDataSync`, the byte
    /// tier's entry read and decoded on this thread) that ends the load at once; nil when the
    /// load must go on.
    private func synchronousHit(_ request: Request) -> ImageResult? {
        let options = request.options
        guard !options.contains(.fromLoaderOnly), !options.contains(.refreshCached) else { return nil }
        if configuration.cacheFreshness.respectsCacheControl {
            switch freshness(of: request) {
            case .fresh: break
            case .staleWhileRevalidate: revalidateInBackground(request)
            case .stale: return nil
            }
        }
        let memoryImage = request.queryCacheType.includesMemory && !request.memoryProbed ? request.cache.memoryImage(for: request.key) : nil
        if let memoryImage {
            if !shouldQueryMemoryData(request) { return ImageResult(image: memoryImage, data: nil, cacheType: .memory, url: request.url) }
            // `.queryMemoryDataSync`: the bytes too, read on this thread.
            if options.contains(.queryMemoryDataSync) {
                return ImageResult(
                    image: memoryImage, data: request.cache.storedData(for: request.key), cacheType: .memory, url: request.url)
            }
        }
        guard options.contains(.queryDiskDataSync), request.queryCacheType.includesDisk, memoryImage == nil,
            let data = request.cache.storedData(for: request.key)
        else {
            return nil
        }
        guard !options.contains(.avoidDecodeImage) else { return ImageResult(image: nil, data: data, cacheType: .disk, url: request.url) }
        // Bytes that do not decode are left to the asynchronous path, which removes them.
        guard let image = try? decodeCachedNow(data, request) else { return nil }
        return ImageResult(image: image, data: data, cacheType: .disk, url: request.url)
    }

    private func shouldQueryMemoryData(_ request: Request) -> Bool {
        request.options.contains(.queryMemoryData) && !request.options.contains(.fromLoaderOnly)
            && !request.options.contains(.refreshCached) && request.queryCacheType.includesMemory
    }

    /// A memory hit that also wants the bytes from the byte tier (without `.queryMemoryDataSync`,
    /// which ``prepare(_:bytesOnly:memoryProbed:)`` answers on the caller's thread): read them as
    /// a low-priority job of the work pool (a blocking read, kept off the concurrency pool), and
    /// deliver both; a cancelled operation is never delivered to.
    private func queryMemoryData(
        _ request: Request, image: Image, operation: LoadOperation, deliver: @escaping @Sendable (SharedLoadEvent) -> Void
    ) {
        workPool.submit(priority: .low) {
            guard !operation.isCancelled else { return }
            let data = request.cache.storedData(for: request.key)
            deliver(.finished(.success(ImageResult(image: image, data: data, cacheType: .memory, url: request.url))))
        }
    }

    /// Joins the shared load of this request's key, or starts it.
    private func subscribe(_ request: Request, operation: LoadOperation, deliver: @escaping @Sendable (SharedLoadEvent) -> Void) {
        let key = sharedKey(for: request)
        let subscriber = SharedLoad.Subscriber(
            priority: request.options.priority, wantsPartial: request.options.contains(.progressiveLoad), deliver: deliver)
        let (load, joined, isNew) = sharedLoads.withLock { loads in
            let (load, isNew) = loads.join(key) { SharedLoad(key: key) }
            return (load, load.add(subscriber), isNew)
        }
        if let cached = joined.cached { subscriber.deliver(.image(cached, isPartial: false)) }
        if joined.raisedPriority { load.escalate() }
        let sharedLoads = sharedLoads
        operation.setCancelHandler { Self.unsubscribe(joined.id, from: load, in: sharedLoads) }
        if isNew {
            // The task runs at the load's priority, so that a caller who joins with a higher one
            // escalates it, and the loader's queue with it.
            let priority = request.options.priority
            load.start(Task(priority: priority.taskPriority) { await self.perform(request, load: load) }, priority: priority)
        }
    }

    private static func unsubscribe(_ id: Int, from load: SharedLoad, in sharedLoads: Locked<CoalescingTable<SharedLoadKey, SharedLoad>>) {
        let stop = sharedLoads.withLock { loads in
            let empty = load.remove(id)
            if empty { loads.remove(load, for: load.key) }
            return empty
        }
        if stop { load.cancel() }
    }

    /// Ends a shared load: no caller can join it from now on, and each current one gets `event`.
    func finish(_ load: SharedLoad, with event: SharedLoadEvent) {
        let subscribers = sharedLoads.withLock { loads in
            loads.remove(load, for: load.key)
            return load.finish()
        }
        for subscriber in subscribers { subscriber.deliver(event) }
    }

    private func sharedKey(for request: Request) -> SharedLoadKey {
        var components: [ObjectIdentifier] = []
        var comparable = request.context.cacheSerializer == nil
        for part in [request.cache as Any, request.loader as Any, request.coders as Any] {
            if type(of: part) is AnyClass { components.append(ObjectIdentifier(part as AnyObject)) } else { comparable = false }
        }
        var requestOptions = request.requestOptions
        requestOptions.priority = .normal
        requestOptions.progressive = false
        return SharedLoadKey(
            cacheKey: request.key, url: request.url, options: request.options.intersection(SharedLoadKey.resultOptions),
            cacheTypes: [
                request.context.queryCacheType, request.context.storeCacheType, request.context.originalQueryCacheType,
                request.context.originalStoreCacheType,
            ],
            request: requestOptions, alternativeSources: request.context.alternativeSources, components: components,
            uniqueness: comparable
                ? 0
                : uniqueLoads.withLock {
                    $0 += 1
                    return $0
                }
        )
    }

    /// Gives one caller an event on its queue, unless it cancelled; the last event finishes it.
    private static func deliver(
        _ event: SharedLoadEvent, to operation: LoadOperation, queue: CallbackQueue, handler: @escaping @Sendable (SharedLoadEvent) -> Void
    ) {
        if case .finished = event {
            guard operation.finish() else { return }
            queue.run { handler(event) }
            return
        }
        guard !operation.isFinished else { return }
        queue.run {
            guard !operation.isFinished else { return }
            handler(event)
        }
    }
}
