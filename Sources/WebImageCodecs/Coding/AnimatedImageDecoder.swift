/// Random access to the frames of an animation that is decoded lazily: frames are composed in
/// order from the file as they are asked for, and the last few are kept (at most
/// ``maximumBufferedFrames``), so playing the animation through costs one composition per frame
/// and a bounded amount of memory. Asking for an earlier frame that is no longer buffered replays
/// the animation from the start.
package final class AnimatedImageDecoder: AnimatedImageProvider {
    private struct State {
        var source: any AnimationFrameSource
        /// The index of the frame `source.next()` returns.
        var position = 0
        var buffer: [Int: PixelBuffer] = [:]
        var order: [Int] = []
    }

    /// The most composed frames kept at once.
    public let maximumBufferedFrames: Int
    public let frameCount: Int
    public let loopCount: Int
    private let durations: [Duration]
    private let state: Locked<State>

    init(source: any AnimationFrameSource, maximumBufferedFrames: Int) {
        self.maximumBufferedFrames = max(1, maximumBufferedFrames)
        frameCount = source.durations.count
        loopCount = source.loopCount
        durations = source.durations
        state = Locked(State(source: source))
    }

    /// A decoder over `source`, or nil when it holds a single frame (a still image).
    static func ifAnimated(_ source: any AnimationFrameSource, maximumBufferedFrames: Int) -> AnimatedImageDecoder? {
        source.durations.count > 1 ? AnimatedImageDecoder(source: source, maximumBufferedFrames: maximumBufferedFrames) : nil
    }

    public func duration(at index: Int) -> Duration {
        durations.indices.contains(index) ? durations[index] : .zero
    }

    public func frame(at index: Int) throws(WebImageError) -> PixelBuffer {
        guard (0..<frameCount).contains(index) else { throw WebImageError(.decodeFailed, "no frame \(index) of \(frameCount)") }
        return try state.withLock { (state: inout State) throws(WebImageError) -> PixelBuffer in
            if let buffered = state.buffer[index] { return buffered }
            if state.position > index {
                try state.source.rewind()
                state.position = 0
            }
            var frame: PixelBuffer
            repeat {
                frame = try state.source.next()
                keep(frame, at: state.position, in: &state)
                state.position += 1
            } while state.position <= index
            return frame
        }
    }

    /// How many composed frames are held now (at most ``maximumBufferedFrames``).
    public var bufferedFrameCount: Int {
        state.withLock { $0.buffer.count }
    }

    private func keep(_ frame: PixelBuffer, at index: Int, in state: inout State) {
        state.buffer[index] = frame
        state.order.append(index)
        while state.order.count > maximumBufferedFrames {
            state.buffer[state.order.removeFirst()] = nil
        }
    }
}
