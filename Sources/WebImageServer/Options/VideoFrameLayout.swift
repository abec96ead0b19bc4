import WebImage

/// imgproxy Pro's `video_thumbnail_tile` and `video_thumbnail_animation` (docs/usage/processing.mdx):
/// frames of a video source, `step` seconds apart from `video_thumbnail_second`, each fitted (or
/// filled) to a box, laid out as a sprite of `columns` x `rows` tiles or played as an animation.
package struct VideoFrameLayout: Sendable, Equatable {
    /// What the frames make.
    package enum Kind: Sendable, Equatable {
        /// A tile sheet, filled row by row.
        case tiles(columns: Int, rows: Int)
        /// An animation whose frames last `delay` milliseconds each.
        case animation(frames: Int, delay: Int)
    }

    package var kind: Kind
    /// Seconds between the frames; negative: the video's duration divided by the frames.
    package var step: Double
    /// Each frame's box (0: that side is not bounded).
    package var width: Int
    package var height: Int
    /// Each frame is extended to the box with black.
    package var extend: Bool
    /// Unused tiles (or the frames past the video's end) are left out rather than kept black (or
    /// repeating the last frame).
    package var trim: Bool
    /// Each frame fills its box, cut around the focus, instead of fitting inside it.
    package var fill: Bool
    /// The focus of a filled frame, 0...1 from the left and the top.
    package var focusX: Double
    package var focusY: Double

    /// How many frames it takes.
    package var frameCount: Int {
        switch kind {
        case .tiles(let columns, let rows): columns * rows
        case .animation(let frames, _): frames
        }
    }

    /// The canonical option, for the cache key.
    package var canonical: String {
        let flags = "\(extend ? 1 : 0):\(trim ? 1 : 0):\(fill ? 1 : 0):\(TransformSpec.format(focusX)):\(TransformSpec.format(focusY))"
        switch kind {
        case .tiles(let columns, let rows):
            return "vtt:\(TransformSpec.format(step)):\(columns):\(rows):\(width):\(height):\(flags)"
        case .animation(let frames, let delay):
            return "vta:\(TransformSpec.format(step)):\(delay):\(frames):\(width):\(height):\(flags)"
        }
    }
}

extension ArgumentReader {
    /// The most tiles of a sheet or frames of an animation one URL may ask for.
    static let maximumVideoFrames = 400

    /// `video_thumbnail_tile`'s or `video_thumbnail_animation`'s arguments after the first three
    /// (`step:columns:rows` or `step:delay:frames`); nil when the step is 0, which turns it off.
    func videoFrameLayout(animation: Bool) throws(ProxyError) -> VideoFrameLayout? {
        try expect(at: 10)
        let step: Double
        if let text = text(0) {
            guard let value = Double(text), value.isFinite, abs(value) <= 86_400 else {
                throw failure("\"\(text)\" is not a step in seconds")
            }
            step = value
        } else {
            step = 0
        }
        guard step != 0 else { return nil }
        let kind: VideoFrameLayout.Kind
        if animation {
            kind = .animation(frames: try integer(2, maximum: Self.maximumVideoFrames) ?? 0, delay: try integer(1, maximum: 60_000) ?? 0)
        } else {
            kind = .tiles(
                columns: try integer(1, maximum: Self.maximumVideoFrames) ?? 0, rows: try integer(2, maximum: Self.maximumVideoFrames) ?? 0)
        }
        let layout = VideoFrameLayout(
            kind: kind, step: step, width: try integer(3, maximum: 8192) ?? 0, height: try integer(4, maximum: 8192) ?? 0,
            extend: try boolean(5) ?? false, trim: try boolean(6) ?? false, fill: try boolean(7) ?? false,
            focusX: try number(8, maximum: 1) ?? 0.5, focusY: try number(9, maximum: 1) ?? 0.5)
        guard (1...Self.maximumVideoFrames).contains(layout.frameCount) else {
            throw failure("takes 1 to \(Self.maximumVideoFrames) \(animation ? "frames" : "tiles"), not \(layout.frameCount)")
        }
        return layout
    }
}
