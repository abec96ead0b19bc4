/// Where a proxy answer came from, as the access log and the request's span name it.
enum CacheTier: String, Sendable {
    /// The result, from the memory tier.
    case memory
    /// The result, from the disk tier.
    case disk
    /// The result, from the bucket the fleet shares.
    case bucket
    /// Processed for this request (or for another one it waited with).
    case processed
    /// A 304 decided by the source's bytes, the result no longer being cached.
    case revalidated
    /// `raw`: the source's bytes.
    case raw
    /// The fallback image, the source failing.
    case fallback
}
