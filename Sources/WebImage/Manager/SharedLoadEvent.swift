/// What a shared load tells each caller subscribed to it.
enum SharedLoadEvent: Sendable {
    /// Bytes received so far, and the total when known.
    case progress(received: Int64, expected: Int64?)
    /// An image that is not the last: a partial image of a progressive load, or the cached
    /// image delivered before a `.refreshCached` revalidation.
    case image(ImageResult, isPartial: Bool)
    /// The end: the result, or nil when a revalidation found the cached image current.
    case finished(Result<ImageResult, WebImageError>?)
}
