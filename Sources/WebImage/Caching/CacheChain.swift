public import Foundation

/// Several image caches behind one (SDWebImage's `SDImageCachesManager`): for example a small
/// fast cache in front of a large shared one. The last cache has the highest priority. Each kind
/// of operation has its own ``CacheChainPolicy``; the defaults are SDWebImage's: queries and
/// lookups serial, stores to the highest-priority cache only, removes and clears concurrent.
public final class CacheChain: ImageCaching {
    /// The caches, lowest priority first.
    public let caches: [any ImageCaching]
    /// How queries run. Default ``CacheChainPolicy/serial``.
    public let queryPolicy: CacheChainPolicy
    /// How stores run. Default ``CacheChainPolicy/highestOnly``.
    public let storePolicy: CacheChainPolicy
    /// How removes run. Default ``CacheChainPolicy/concurrent``.
    public let removePolicy: CacheChainPolicy
    /// How lookups run. Default ``CacheChainPolicy/serial``.
    public let containsPolicy: CacheChainPolicy
    /// How clears run. Default ``CacheChainPolicy/concurrent``.
    public let clearPolicy: CacheChainPolicy

    /// Creates a chain; `caches` are in increasing priority.
    public init(
        caches: [any ImageCaching],
        queryPolicy: CacheChainPolicy = .serial,
        storePolicy: CacheChainPolicy = .highestOnly,
        removePolicy: CacheChainPolicy = .concurrent,
        containsPolicy: CacheChainPolicy = .serial,
        clearPolicy: CacheChainPolicy = .concurrent
    ) {
        self.caches = caches
        self.queryPolicy = queryPolicy
        self.storePolicy = storePolicy
        self.removePolicy = removePolicy
        self.containsPolicy = containsPolicy
        self.clearPolicy = clearPolicy
    }

    public func query(_ key: CacheKey, options: ImageCacheOptions, cacheType: ImageCacheType) async -> ImageCacheResult {
        await firstHit(policy: queryPolicy, miss: .miss, isHit: \.isHit) { cache in
            await cache.query(key, options: options, cacheType: cacheType)
        }
    }

    public func contains(_ key: CacheKey, cacheType: ImageCacheType) async -> ImageCacheType {
        await firstHit(
            policy: containsPolicy, miss: .none, isHit: { $0 != .none },
            { cache in await cache.contains(key, cacheType: cacheType) }
        )
    }

    /// Stores per the store policy; every selected cache is tried, and the first error is thrown
    /// after all have run.
    public func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType) async throws(WebImageError) {
        try await store(image, data: data, for: key, cacheType: cacheType, metadata: DiskCacheMetadata())
    }

    /// Stores with metadata, per the store policy, as ``store(_:data:for:cacheType:)`` does.
    public func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType, metadata: DiskCacheMetadata)
        async throws(WebImageError)
    {
        let errors = await forEach(policy: storePolicy) { cache -> WebImageError? in
            do throws(WebImageError) {
                try await cache.store(image, data: data, for: key, cacheType: cacheType, metadata: metadata)
                return nil
            } catch {
                return error
            }
        }
        if let error = errors.compactMap({ $0 }).first { throw error }
    }

    /// The first memory hit among the caches the query policy selects, highest priority first.
    public func memoryImage(for key: CacheKey) -> Image? {
        for cache in selected(queryPolicy) {
            if let image = cache.memoryImage(for: key) { return image }
        }
        return nil
    }

    /// Puts `image` in the memory tier of each cache the store policy selects.
    public func storeInMemory(_ image: Image, for key: CacheKey) {
        for cache in selected(storePolicy) { cache.storeInMemory(image, for: key) }
    }

    /// The first bytes, in query-policy order, that a selected cache's byte tier holds.
    public func storedData(for key: CacheKey) -> Data? {
        for cache in selected(queryPolicy) {
            if let data = cache.storedData(for: key) { return data }
        }
        return nil
    }

    /// The first metadata among the caches the query policy selects, highest priority first.
    public func metadata(for key: CacheKey) -> DiskCacheMetadata? {
        for cache in selected(queryPolicy) {
            if let metadata = cache.metadata(for: key) { return metadata }
        }
        return nil
    }

    /// Updates the metadata in every cache the query policy selects: whichever answers
    /// ``metadata(for:)`` next must see the new value.
    public func updateMetadata(_ metadata: DiskCacheMetadata, for key: CacheKey) async {
        for cache in selected(queryPolicy) { await cache.updateMetadata(metadata, for: key) }
    }

    public func remove(_ key: CacheKey, cacheType: ImageCacheType) async {
        _ = await forEach(policy: removePolicy) { await $0.remove(key, cacheType: cacheType) }
    }

    public func clear(_ cacheType: ImageCacheType) async {
        _ = await forEach(policy: clearPolicy) { await $0.clear(cacheType) }
    }

    /// The caches a policy selects, highest priority first.
    private func selected(_ policy: CacheChainPolicy) -> [any ImageCaching] {
        switch policy {
        case .highestOnly: caches.last.map { [$0] } ?? []
        case .lowestOnly: caches.first.map { [$0] } ?? []
        case .serial, .concurrent: caches.reversed()
        }
    }

    private func firstHit<Result: Sendable>(
        policy: CacheChainPolicy,
        miss: Result,
        isHit: @escaping @Sendable (Result) -> Bool,
        _ ask: @escaping @Sendable (any ImageCaching) async -> Result
    ) async -> Result {
        let chosen = selected(policy)
        guard policy == .concurrent else {
            for cache in chosen {
                let result = await ask(cache)
                if isHit(result) { return result }
            }
            return miss
        }
        return await withTaskGroup(of: Result.self) { group in
            for cache in chosen { group.addTask { await ask(cache) } }
            for await result in group where isHit(result) {
                group.cancelAll()
                return result
            }
            return miss
        }
    }

    private func forEach<Result: Sendable>(
        policy: CacheChainPolicy,
        _ body: @escaping @Sendable (any ImageCaching) async -> Result
    ) async -> [Result] {
        let chosen = selected(policy)
        guard policy == .concurrent else {
            var results: [Result] = []
            for cache in chosen { results.append(await body(cache)) }
            return results
        }
        return await withTaskGroup(of: Result.self) { group in
            for cache in chosen { group.addTask { await body(cache) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }
}
