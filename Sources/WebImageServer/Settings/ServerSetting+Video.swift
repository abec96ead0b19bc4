import WebImage

/// Thumbnails of video sources (imgproxy Pro's video thumbnail settings).
extension ServerSetting {
    static let video: [ServerSetting] = [
        ServerSetting(
            "ENABLE_VIDEO_THUMBNAILS", form: .flag, imgproxy: .init("ENABLE_VIDEO_THUMBNAILS", .boolean), default: "off",
            help:
                "MP4, QuickTime and WebM sources (H.264, H.265, VP8, VP9, AV1) are answered with a frame, processed like any image; off, a video source is a 422. Needs a build with the package's `Video` trait (FFmpeg's libraries)",
            read: { (values, settings) throws(WebImageError) in
                settings.configuration.enableVideoThumbnails = try SettingText.boolean(values.last)
            },
            rule: { configuration in
                guard configuration.enableVideoThumbnails, !ImageServerConfiguration.decodesVideos else { return nil }
                return "needs a build with the package's Video trait (FFmpeg's libraries); this one reads no video"
            }),
        ServerSetting(
            "VIDEO_THUMBNAIL_SECOND", form: .value("SECONDS"), imgproxy: .init("VIDEO_THUMBNAIL_SECOND", .decimal),
            default: "the first keyframe",
            help:
                "the default of `vts`: the time of the frame taken (past the end: the last frame). imgproxy's default is 1; unset here, the first keyframe, which needs nothing else decoded",
            read: { (values, settings) throws(WebImageError) in
                settings.configuration.videoThumbnails.second = try SettingText.number(values.last)
            },
            rule: { ($0.videoThumbnails.second ?? 0) >= 0 ? nil : "is 0 or more" }),
        .flag(
            "VIDEO_THUMBNAIL_KEYFRAMES", \.videoThumbnails.keyframesOnly, imgproxy: .init("VIDEO_THUMBNAIL_KEYFRAMES", .boolean),
            help: "the default of `vtk`: the last keyframe at or before the time instead of the exact frame (faster)"),
        .flag(
            "VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES", \.videoThumbnails.keyframesForLongSteps,
            imgproxy: .init("VIDEO_THUMBNAIL_TILE_AUTO_KEYFRAMES", .boolean),
            help:
                "`vtt` and `vta` take keyframes only when their step is longer than the video's longest interval between keyframes (by its container's index)"
        ),
        .integer(
            "VIDEO_THUMBNAIL_PROBE_SIZE", \.videoThumbnails.probeSize, "BYTES", rule: .positive,
            imgproxy: .init("VIDEO_THUMBNAIL_PROBE_SIZE", .integer), default: "5000000",
            help: "the most bytes FFmpeg reads to recognise a video's streams"),
        ServerSetting(
            "VIDEO_THUMBNAIL_MAX_ANALYZE_DURATION", flag: .some(nil), form: .value("MS"),
            imgproxy: .init("VIDEO_THUMBNAIL_MAX_ANALYZE_DURATION", .integer), default: "0",
            help: "the most milliseconds of a video FFmpeg analyses to describe its streams; 0: FFmpeg's heuristic",
            read: { (values, settings) throws(WebImageError) in
                let milliseconds = try SettingText.integer(values.last)
                settings.configuration.videoThumbnails.maximumAnalyzeDuration = milliseconds == 0 ? nil : .milliseconds(milliseconds)
            },
            rule: { ($0.videoThumbnails.maximumAnalyzeDuration ?? .zero) >= .zero ? nil : "is 0 or more" }),
    ]
}

extension ImageServerConfiguration {
    /// Whether this build decodes videos (the package's `Video` trait).
    static var decodesVideos: Bool {
        CodersManager.shared.all.contains { $0.canDecode(.mp4) }
    }
}
