import Foundation

/// Turns the bytes of a progressive download into partial images through the format's
/// ``IncrementalImageDecoder`` (made from the first bytes): at most one decode at a time, always
/// of the newest bytes. Partial images are never transformed or stored.
final class PartialImageDecoder: Sendable {
    private struct State {
        var decoding = false
        var pending: Data?
        var stopped = false
        var lastByteCount = 0
        var coder: (any IncrementalImageDecoder)?
        var hasCoder = false
    }

    private let manager: ImageManager
    private let request: ImageManager.Request
    private let load: SharedLoad
    private let state = Locked(State())

    init(manager: ImageManager, request: ImageManager.Request, load: SharedLoad) {
        self.manager = manager
        self.request = request
        self.load = load
    }

    /// Offers the bytes received so far.
    func offer(_ data: Data) {
        let start = state.withLock { state -> Bool in
            guard !state.stopped, data.count > state.lastByteCount else { return false }
            guard !state.decoding else {
                state.pending = data
                return false
            }
            state.decoding = true
            return true
        }
        if start { decode(data) }
    }

    /// No partial image is delivered after this.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// The download's progressive coder, made once from the first bytes that sniff as a format.
    private func coder(for data: Data) -> (any IncrementalImageDecoder)? {
        state.withLock { state in
            if !state.hasCoder, ImageFormat(sniffing: data) != nil {
                state.coder = request.coders.incrementalDecoder(for: data, options: manager.decodeOptions(for: request, partial: true))
                state.hasCoder = true
            }
            return state.coder
        }
    }

    private func decode(_ data: Data) {
        let coder = coder(for: data)
        Task {
            var image: Image?
            if let coder { image = await manager.workPool.runUnlessCancelled(priority: request.workPriority) { coder.update(data) } }
            let (deliver, next) = state.withLock { state -> (Bool, Data?) in
                state.lastByteCount = data.count
                defer { state.pending = nil }
                guard !state.stopped, let pending = state.pending, pending.count > data.count else {
                    state.decoding = false
                    return (!state.stopped, nil)
                }
                return (true, pending)
            }
            if deliver, let image {
                load.broadcast(
                    .image(ImageResult(image: image, data: nil, cacheType: .none, url: request.url, isFinished: false), isPartial: true))
            }
            if let next { decode(next) }
        }
    }
}
