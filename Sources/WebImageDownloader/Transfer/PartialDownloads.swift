import Foundation

/// The bytes of downloads that stopped part-way, kept so the next download of the same URL can
/// ask for the rest (`Range` with `If-Range`). Bounded in total; the oldest go first.
final class PartialDownloads: Sendable {
    struct Partial: Sendable {
        let data: Data
        /// The ETag, or else the Last-Modified date, that the rest must still match.
        let validator: String
        let sequence: Int
    }

    private let maximumTotalBytes: Int
    private let entries = Locked<(partials: [URL: Partial], total: Int, sequence: Int)>(([:], 0, 0))

    init(maximumTotalBytes: Int) {
        self.maximumTotalBytes = maximumTotalBytes
    }

    /// Keeps `data` for `url` if the response allows resuming it.
    func keep(_ data: Data, for url: URL, head: DownloadResponseHead) {
        guard !data.isEmpty, data.count <= maximumTotalBytes,
            head.header("Accept-Ranges")?.lowercased() == "bytes",
            let validator = head.header("ETag") ?? head.header("Last-Modified")
        else { return }
        entries.withLock { state in
            if let old = state.partials.removeValue(forKey: url) { state.total -= old.data.count }
            state.sequence += 1
            state.partials[url] = Partial(data: data, validator: validator, sequence: state.sequence)
            state.total += data.count
            while state.total > maximumTotalBytes, let oldest = state.partials.min(by: { $0.value.sequence < $1.value.sequence }) {
                state.partials.removeValue(forKey: oldest.key)
                state.total -= oldest.value.data.count
            }
        }
    }

    /// Takes what is kept for `url`: the caller resumes from it or starts over.
    func take(_ url: URL) -> Partial? {
        entries.withLock { state in
            guard let partial = state.partials.removeValue(forKey: url) else { return nil }
            state.total -= partial.data.count
            return partial
        }
    }
}
