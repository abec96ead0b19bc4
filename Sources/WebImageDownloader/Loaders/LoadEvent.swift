/// What a loader tells each of its callers, in order: progress and data chunks as bytes arrive,
/// then exactly one ``finished(_:)`` — unless the caller cancelled, after which it hears nothing.
public enum LoadEvent: Sendable {
    /// Bytes received so far, and the total when the response said it.
    case progress(received: Int64, expected: Int64?)
    /// Everything received so far, for progressive decoding.
    case partialData(LoadedData)
    /// The load ended.
    case finished(Result<LoadedData, WebImageError>)
}
