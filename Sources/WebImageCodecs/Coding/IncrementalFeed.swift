/// What every progressive decoder keeps for one download: its codec's incremental decoder, made
/// once the header can be read, and how many bytes that decoder has had, so that each update
/// (which gets every byte so far) hands over only the new ones.
struct IncrementalFeed<Decoder> {
    /// What making the decoder came to.
    enum Start {
        case ready(Decoder)
        /// The header has not all arrived yet.
        case waiting
        /// The data can never be decoded incrementally (corrupt, over the limits, animated).
        case refused
    }

    private(set) var decoder: Decoder?
    private var fed = 0
    private var failed = false

    /// Makes the decoder with `start` if there is none yet, then gives `feed` the bytes of
    /// `bytes` it has not had. `feed` answers whether the decoder can go on, and what it made.
    mutating func update<Made>(
        _ bytes: UnsafeRawBufferPointer,
        start: (UnsafeRawBufferPointer) -> Start,
        feed: (Decoder, UnsafeBufferPointer<UInt8>) -> (canGoOn: Bool, made: Made?)
    ) -> Made? {
        guard !failed, bytes.count > fed, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if decoder == nil {
            switch start(bytes) {
            case .ready(let made): decoder = made
            case .waiting: return nil
            case .refused:
                failed = true
                return nil
            }
        }
        guard let decoder else { return nil }
        let result = feed(decoder, UnsafeBufferPointer(start: base + fed, count: bytes.count - fed))
        fed = bytes.count
        failed = !result.canGoOn
        return result.made
    }
}
