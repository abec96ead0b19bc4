/// What a loader tells its caller while a load runs, in order: progress as bytes arrive and,
/// when the caller asked for it (``LoadRequestOptions/progressive``), everything received so
/// far. The result is the load's return value; a cancelled caller hears nothing more.
public enum LoadEvent: Sendable {
    /// Bytes received so far, and the total when the response said it.
    case progress(received: Int64, expected: Int64?)
    /// Everything received so far, for progressive decoding.
    case partialData(LoadedData)
}
