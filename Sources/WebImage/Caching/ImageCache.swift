public import Foundation
import Logging

/// Decoded images in memory, their encoded bytes on disk (SDWebImage's `SDImageCache`).
///
/// A query looks in memory, then on disk; a disk hit is decoded (at the key's thumbnail size,
/// with the key's scale) and put in memory. A store puts the image in memory and the data on
/// disk; an image stored without data is encoded first, as PNG when it has alpha and as JPEG
/// otherwise. Disk work runs in the library's work pool (the one the manager decodes in) unless a
/// `…Sync` option asks for the caller's thread.
public final class ImageCache: ImageCaching {
    /// The shared cache: the default memory cache and the disk cache of namespace `default`
    /// (memory only, with a logged notice, if that directory cannot be opened).
    public static let shared: ImageCache = {
        let disk: DiskCache?
        do {
            disk = try DiskCache(namespace: "default")
        } catch {
            Logger(label: "webimage.cache.image").notice("the shared image cache works in memory only", metadata: ["error": "\(error)"])
            disk = nil
        }
        return ImageCache(disk: disk)
    }()

    /// Decoded images.
    public let memory: MemoryCache<Image>
    /// Encoded bytes; nil for a memory-only cache.
    public let disk: DiskCache?
    /// The coders that decode disk entries and encode images stored without data.
    public let coders: CodersManager
    /// Policies.
    public let configuration: ImageCacheConfiguration

    /// Where disk reads and writes run: the shared pool unless a test gives its own.
    let workPool: WorkPool
    private let logger: Logger

    /// A cache over the given tiers.
    public convenience init(
        memory: MemoryCache<Image> = MemoryCache(),
        disk: DiskCache?,
        coders: CodersManager = .shared,
        configuration: ImageCacheConfiguration = ImageCacheConfiguration(),
        telemetry: Telemetry = .default
    ) {
        self.init(memory: memory, disk: disk, coders: coders, configuration: configuration, telemetry: telemetry, workPool: .shared)
    }

    init(
        memory: MemoryCache<Image>, disk: DiskCache?, coders: CodersManager, configuration: ImageCacheConfiguration, telemetry: Telemetry,
        workPool: WorkPool
    ) {
        self.memory = memory
        self.disk = disk
        self.coders = coders
        self.configuration = configuration
        self.workPool = workPool
        logger = telemetry.logger("cache.image")
    }

    /// A named cache: the default memory limits and the disk cache of `namespace`.
    public convenience init(namespace: String, diskConfiguration: DiskCacheConfiguration = DiskCacheConfiguration()) throws(WebImageError) {
        self.init(disk: try DiskCache(namespace: namespace, configuration: diskConfiguration))
    }

    // MARK: - Synchronous reads

    /// Reads and decodes the disk entry for `key` on the caller's thread, putting the image in
    /// memory; nil when absent or undecodable.
    public func imageFromDisk(for key: CacheKey, options: ImageCacheOptions = []) -> Image? {
        readDisk(key, options: options).image
    }

    /// The image in memory for `key`, if any: a lock and a lookup (the memory facet of
    /// ``ImageCaching``).
    public func memoryImage(for key: CacheKey) -> Image? {
        memory.inlinedValue(for: key)
    }

    /// Puts `image` in memory, unless ``ImageCacheConfiguration/shouldCacheImagesInMemory`` is off.
    public func storeInMemory(_ image: Image, for key: CacheKey) {
        if configuration.shouldCacheImagesInMemory { memory.insert(image, for: key, cost: image.memoryCost) }
    }

    /// The disk entry's bytes for `key`, read on the caller's thread (the byte facet of
    /// ``ImageCaching``).
    public func storedData(for key: CacheKey) -> Data? {
        try? disk?.data(for: key.stringValue)
    }

    /// The disk entry's metadata for `key`: its HTTP validators, content type and expiry.
    public func metadata(for key: CacheKey) -> DiskCacheMetadata? {
        disk?.metadata(for: key.stringValue)
    }

    /// Replaces the disk entry's metadata for `key`, keeping its bytes; a failed write leaves the
    /// old metadata (a revalidation then happens once more).
    public func updateMetadata(_ metadata: DiskCacheMetadata, for key: CacheKey) async {
        try? disk?.updateMetadata(metadata, for: key.stringValue)
    }

    /// Whether the disk holds `key`.
    public func diskImageExists(for key: CacheKey) -> Bool {
        disk?.contains(key.stringValue) ?? false
    }

    // MARK: - ImageCaching

    /// Looks `key` up: memory first (a hit reads nothing from disk, unless
    /// ``ImageCacheOptions/queryMemoryData`` asks for its bytes too), then the disk, whose hit
    /// is decoded (unless ``ImageCacheOptions/avoidDecodeImage``) and put in memory. Disk reads run in the work
    /// pool, or on the caller's thread with the `…Sync` options. A caller cancelled while its
    /// read waits in the pool gets a miss at once; the read does not run.
    public func query(_ key: CacheKey, options: ImageCacheOptions = [], cacheType: ImageCacheType = .all) async -> ImageCacheResult {
        if cacheType.includesMemory, let image = memory.inlinedValue(for: key) {
            guard options.contains(.queryMemoryData), let disk else { return ImageCacheResult(image: image, data: nil, cacheType: .memory) }
            return await read(synchronously: options.contains(.queryMemoryDataSync)) {
                ImageCacheResult(image: image, data: try? disk.data(for: key.stringValue), cacheType: .memory)
            }
        }
        guard cacheType.includesDisk, let disk, !disk.isCertainMiss(key.stringValue) else { return .miss }
        return await read(synchronously: options.contains(.queryDiskDataSync)) { self.readDisk(key, options: options) }
    }

    /// Runs a disk read here or in the pool; a read the caller stopped waiting for is a miss.
    private func read(synchronously: Bool, _ work: @escaping @Sendable () -> ImageCacheResult) async -> ImageCacheResult {
        guard !synchronously else { return work() }
        return (try? await workPool.run { () throws(WebImageError) in work() }) ?? .miss
    }

    public func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType = .all) async throws(WebImageError) {
        try await store(image, data: data, for: key, cacheType: cacheType, metadata: DiskCacheMetadata())
    }

    /// Stores an image in memory and its data (or, without data, its encoding) on disk, with the
    /// HTTP metadata the disk keeps beside it.
    public func store(
        _ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType = .all, metadata: DiskCacheMetadata
    ) async throws(WebImageError) {
        if cacheType.includesMemory, let image {
            memory.insert(image, for: key, cost: image.memoryCost)
        }
        guard cacheType.includesDisk, let disk, image != nil || data != nil else { return }
        // In arrival order with the decodes (a lower priority could starve the writes behind a
        // long stream of decodes). Not cancellable: a store the caller stopped waiting for still
        // completes, as SDWebImage's does.
        let result: Result<Void, WebImageError> = await withCheckedContinuation { continuation in
            workPool.submit(priority: .normal) {
                continuation.resume(
                    returning: Result { () throws(WebImageError) in
                        let bytes: Data
                        if let data { bytes = data } else { bytes = try self.encodeForDisk(image!) }
                        try disk.store(bytes, for: key.stringValue, metadata: metadata)
                    })
            }
        }
        try result.get()
    }

    /// Removes `key` from the tiers `cacheType` names; a disk entry that cannot be removed is
    /// logged (the disk cache's own limits remove it later).
    public func remove(_ key: CacheKey, cacheType: ImageCacheType = .all) async {
        if cacheType.includesMemory { memory.removeValue(for: key) }
        guard cacheType.includesDisk, let disk else { return }
        do throws(WebImageError) {
            try disk.remove(key.stringValue)
        } catch {
            logger.warning("a disk entry could not be removed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    public func contains(_ key: CacheKey, cacheType: ImageCacheType = .all) async -> ImageCacheType {
        if cacheType.includesMemory && memory.inlinedContains(key) { return .memory }
        if cacheType.includesDisk && diskImageExists(for: key) { return .disk }
        return .none
    }

    /// Empties the tiers `cacheType` names (SDWebImage's `clearMemory` and `clearDisk`); a disk
    /// that cannot be emptied is logged.
    public func clear(_ cacheType: ImageCacheType = .all) async {
        if cacheType.includesMemory { memory.removeAll() }
        guard cacheType.includesDisk, let disk else { return }
        do throws(WebImageError) {
            try disk.removeAll()
        } catch {
            logger.warning("the disk cache could not be emptied", metadata: ["error": "\(error)"])
        }
    }

    /// The bytes the disk cache's entries take (`DiskCache.totalSize`).
    public var totalDiskSize: Int { disk?.totalSize ?? 0 }
    /// The disk cache's entry count.
    public var diskCount: Int { disk?.count ?? 0 }

    // MARK: - Internals

    private func readDisk(_ key: CacheKey, options: ImageCacheOptions) -> ImageCacheResult {
        guard let disk, let data = try? disk.data(for: key.stringValue) else { return .miss }
        guard !options.contains(.avoidDecodeImage) else { return ImageCacheResult(image: nil, data: data, cacheType: .disk) }
        let decodeOptions = DecodeOptions(
            limits: configuration.decodeLimits,
            thumbnail: key.thumbnail,
            firstFrameOnly: options.contains(.decodeFirstFrameOnly),
            scale: key.scale ?? Image.scale(forKey: key.original),
            scaleDownLargeImages: options.contains(.scaleDownLargeImages)
        )
        do throws(WebImageError) {
            let image = try coders.decode(data, options: decodeOptions)
            if configuration.shouldCacheImagesInMemory { memory.insert(image, for: key, cost: image.memoryCost) }
            return ImageCacheResult(image: image, data: data, cacheType: .disk)
        } catch {
            // Bytes that no longer decode are never served again.
            logger.notice("removing an undecodable disk entry", metadata: ["key": "\(key)", "error": "\(error)"])
            try? disk.remove(key.stringValue)
            return .miss
        }
    }

    /// SDWebImage's rule for an image stored without data: PNG when it has alpha, else JPEG.
    private func encodeForDisk(_ image: Image) throws(WebImageError) -> Data {
        let format: ImageFormat = image.hasAlpha ? .png : .jpeg
        return try coders.encode(image, as: format, options: EncodeOptions(quality: configuration.diskEncodingQuality))
    }
}
