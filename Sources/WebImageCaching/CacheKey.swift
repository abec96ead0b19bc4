/// The key of one cached image: the original key plus the parts that make a variant of it.
///
/// The original key is the URL's absolute string, or what a cache key filter made of it. A
/// thumbnail size, a transformer's key and a scale factor each make a different variant, stored
/// apart from the original and from every other variant.
///
/// ## String form
///
/// ``stringValue`` is stable across releases and is what the disk cache hashes into a file name:
///
/// - the original key, with each `{` written `{{` and each `}` written `}}`;
/// - then, only for a variant, in this order and each only when set:
///   `{thumbnail:WxH:fit}` or `{thumbnail:WxH:fill}` (aspect ratio preserved, or not),
///   `{transform:KEY}` (the transformer key, escaped the same way), `{scale:S}` (shortest decimal).
///
/// So `https://x.com/a.png` with a 300×200 aspect-fit thumbnail is
/// `https://x.com/a.png{thumbnail:300x200:fit}`. Because a lone `{` appears only where a variant
/// part starts, no original and no variant can spell another's string form.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {

    /// The key of the original image.
    public let original: String
    /// The thumbnail variant, if any.
    public let thumbnail: ThumbnailSize?
    /// The transformer's key, if the image is transformed.
    public let transformerKey: String?
    /// The scale factor given with the request, if any.
    public let scale: Double?
    /// Hashed once, when the key is made: a memory-cache hit then hashes a single integer
    /// instead of the whole URL, twice (shard and table).
    @usableFromInline let precomputedHash: Int

    /// Creates a key; with only `original`, the key of the original image.
    public init(_ original: String, thumbnail: ThumbnailSize? = nil, transformerKey: String? = nil, scale: Double? = nil) {
        self.original = original
        self.thumbnail = thumbnail
        self.transformerKey = transformerKey
        self.scale = scale
        var hasher = Hasher()
        hasher.combine(original)
        hasher.combine(thumbnail)
        hasher.combine(transformerKey)
        hasher.combine(scale)
        precomputedHash = hasher.finalize()
    }

    // Equality and hashing are inlinable: a memory hit in another module probes its table with
    // them, and a call through the module boundary for each was measured on that path.
    @inlinable
    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.precomputedHash == rhs.precomputedHash && lhs.original == rhs.original && lhs.thumbnail == rhs.thumbnail
            && lhs.transformerKey == rhs.transformerKey && lhs.scale == rhs.scale
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }

    /// What a `Dictionary` asks for: the precomputed hash mixed with the table's seed, without a
    /// second SipHash round. The precomputed hash is already SipHash of the key under the
    /// process's random seed, so tables stay resistant to crafted collisions.
    @inlinable
    public func _rawHashValue(seed: Int) -> Int {
        precomputedHash ^ seed
    }

    /// The hash computed at creation, for spreading keys over shards.
    @inlinable var shardHash: Int { precomputedHash }

    /// Whether this is the key of a variant rather than of the original.
    public var isVariant: Bool {
        thumbnail != nil || transformerKey != nil || scale != nil
    }

    /// The key of the original image this variant was made from.
    public var originalKey: CacheKey {
        CacheKey(original)
    }

    /// The stable string form (see the type's documentation).
    public var stringValue: String {
        var text = Self.escaped(original)
        if let thumbnail {
            text += "{thumbnail:\(thumbnail.width)x\(thumbnail.height):\(thumbnail.preservesAspectRatio ? "fit" : "fill")}"
        }
        if let transformerKey {
            text += "{transform:" + Self.escaped(transformerKey) + "}"
        }
        if let scale {
            text += "{scale:\(scale)}"
        }
        return text
    }

    public var description: String { stringValue }

    private static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "}") }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 4)
        for character in text.unicodeScalars {
            if character == "{" || character == "}" { result.unicodeScalars.append(character) }
            result.unicodeScalars.append(character)
        }
        return result
    }
}
