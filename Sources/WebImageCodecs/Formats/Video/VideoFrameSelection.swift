/// Which frames a decode takes from a video (MP4, QuickTime or WebM), and the bounds it decodes
/// them within. The options behind imgproxy's `video_thumbnail_second`,
/// `video_thumbnail_keyframes` and the frames of `video_thumbnail_tile` and
/// `video_thumbnail_animation`.
///
/// Videos are decoded only in a build with the package's `Video` trait (FFmpeg's libraries);
/// without it a video is recognised (``ImageFormat/isVideo``) and refused with
/// `unsupportedFormat`.
public struct VideoFrameSelection: Sendable, Hashable {
    /// Where the first frame is taken, in seconds from the start of the video; nil (the default)
    /// takes the first keyframe, which needs nothing else decoded. A time past the end takes the
    /// last frame.
    public var second: Double?
    /// Take the last keyframe at or before each time instead of the frame shown at it: nothing
    /// between keyframes is decoded, so it is faster, and the frame's time is not exactly the one
    /// asked (imgproxy's `video_thumbnail_keyframes`). Default false.
    public var keyframesOnly: Bool
    /// With several frames: take keyframes only when ``step`` is longer than the video's longest
    /// interval between keyframes (by its container's index), which then costs nothing in
    /// precision worth the decoding (imgproxy's `IMGPROXY_VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES`).
    /// Default false.
    public var keyframesForLongSteps = false
    /// How many frames to take, ``step`` seconds apart; 1 (the default) takes one. Frames that
    /// would lie past the end are not taken, so a short video gives fewer.
    public var count: Int
    /// Seconds between the frames when ``count`` is over 1. A negative step spreads the frames
    /// over the whole video (its duration divided by ``count``), as imgproxy's tile and animation
    /// options do. Default 0.
    public var step: Double
    /// The most frames decoded to reach the ones taken (a keyframe far before the time asked, a
    /// stream of tiny frames), after which the decode fails with `tooLarge`. Default 3,000.
    public var maximumDecodedFrames: Int
    /// How long the whole decode may take, after which it fails with `tooLarge`: FFmpeg's reads
    /// and decodes are interrupted. Default 20 seconds.
    public var timeLimit: Duration
    /// The most bytes FFmpeg reads to recognise the streams (imgproxy's
    /// `IMGPROXY_VIDEO_THUMBNAIL_PROBE_SIZE`). Default 5,000,000.
    public var probeSize: Int
    /// The most stream time FFmpeg analyses to describe the streams (imgproxy's
    /// `IMGPROXY_VIDEO_THUMBNAIL_MAX_ANALYZE_DURATION`); nil (the default) leaves it to FFmpeg's
    /// heuristic.
    public var maximumAnalyzeDuration: Duration?

    /// Creates a selection; the defaults take the first keyframe.
    public init(
        second: Double? = nil, keyframesOnly: Bool = false, count: Int = 1, step: Double = 0, maximumDecodedFrames: Int = 3_000,
        timeLimit: Duration = .seconds(20), probeSize: Int = 5_000_000, maximumAnalyzeDuration: Duration? = nil
    ) {
        self.second = second
        self.keyframesOnly = keyframesOnly
        self.count = count
        self.step = step
        self.maximumDecodedFrames = maximumDecodedFrames
        self.timeLimit = timeLimit
        self.probeSize = probeSize
        self.maximumAnalyzeDuration = maximumAnalyzeDuration
    }
}
