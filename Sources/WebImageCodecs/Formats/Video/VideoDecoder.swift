#if Video
import CWebImageVideo
import Foundation
public import WebImageCore

/// Takes the frames a ``VideoFrameSelection`` asks for out of a video held in memory, through
/// FFmpeg (CWebImageVideo): the containers MP4, QuickTime and WebM, the codecs H.264, H.265,
/// VP8, VP9 and AV1, nothing opened but the caller's bytes.
///
/// Bounded before and while it decodes: the input against ``DecodeLimits/maximumInputSize``, the
/// declared size and every frame taken against ``DecodeLimits/maximumPixelCount`` (all frames
/// together, as for an animation), the frames decoded against
/// ``VideoFrameSelection/maximumDecodedFrames``, the whole decode against
/// ``VideoFrameSelection/timeLimit``.
///
/// An HDR stream's frames (PQ or HLG) are read at 16 bits and tone-mapped to SDR as an HDR still
/// is (``PixelBuffer/reducedToEightBits(describedBy:)``); with `keepsHighBitDepth`, one frame of a
/// stream of more than 8 bits is kept at 16 bits in the stream's transfer and primaries.
struct VideoDecoder {
    let selection: VideoFrameSelection
    let limits: DecodeLimits
    /// ``DecodeOptions/keepsHighBitDepth``: honoured for one frame, not reshaped.
    var keepsHighBitDepth = false
    /// Reshapes each frame as it is decoded, before the next is: the frames held are then the
    /// reshaped ones (the proxy's tiles), counted against the pixel limit as they are made.
    var shaping: VideoFrameShaping?

    /// The frames of `data` (a video in `format`) as an image: one frame, or an animation of
    /// ``VideoFrameSelection/count`` frames (fewer when the video ends first), each lasting the step.
    func image(of data: Data, format: ImageFormat) throws(WebImageError) -> Image {
        guard data.count <= limits.maximumInputSize else {
            throw WebImageError(.tooLarge, "\(data.count) bytes of input is over the \(limits.maximumInputSize)-byte limit")
        }
        let result: Result<Image, WebImageError> = data.withUnsafeBytes { bytes in
            Result { () throws(WebImageError) -> Image in
                let reader = try VideoReader(bytes: bytes, selection: selection, maximumPixels: limits.maximumPixelCount)
                defer { reader.close() }
                return try image(from: reader, format: format)
            }
        }
        return try result.get()
    }

    private func image(from reader: VideoReader, format: ImageFormat) throws(WebImageError) -> Image {
        let info = reader.info
        let count = max(1, selection.count)
        // Every frame taken is held at once: all of them together within the pixel limit (the
        // reshaped ones are counted as they are made).
        let (height, overflow) = Int(info.height).multipliedReportingOverflow(by: shaping == nil ? count : 1)
        guard !overflow else { throw WebImageError(.tooLarge, "\(count) frames of \(info.width)x\(info.height) are over the limit") }
        try limits.check(width: Int(info.width), height: height, inputSize: 0)
        let conversion = FrameConversion(
            stream: reader.color(), keeps: keepsHighBitDepth && count == 1 && shaping == nil, together: count > 1)
        if conversion.readsSixteenBits { try limits.checkHighBitDepth(width: Int(info.width), height: Int(info.height)) }
        let step = try self.step(count: count, duration: info.duration)
        let orientation = Self.orientation(rotation: Int(info.rotation))
        let keyframes = takesKeyframes(info, step: step)
        let duration: Duration = count > 1 ? .milliseconds(Int64((step * 1000).rounded())) : .zero
        var frames: [ImageFrame] = []
        var cursor = FrameCursor()
        for index in 0..<count {
            let target = (selection.second ?? 0) + Double(index) * step
            guard
                let decoded = try frame(
                    at: target, first: index == 0, keyframes: keyframes, reader: reader, conversion: conversion, cursor: &cursor)
            else {
                break
            }
            let pixels =
                try shaping.map { shape throws(WebImageError) in
                    var frame = Image(pixels: decoded, orientation: orientation, sourceFormat: format, hasAlpha: false)
                    frame.sourceColor = reader.color()
                    return try shape(frame).pixels
                } ?? decoded
            try hold(pixels, after: frames)
            frames.append(ImageFrame(pixels: pixels, duration: duration))
        }
        var image = Image(
            frames: frames, loopCount: 0, orientation: shaping == nil ? orientation : .up, sourceFormat: format, hasAlpha: false)
        // With what the frames' side data stated (H.265's light levels).
        image.sourceColor = reader.color()
        return conversion.tonesTogether ? image.reducedToEightBits() : image
    }

    /// Checks that `pixels` can be held beside `frames`: the same size, all within the pixel limit
    /// (a frame of 16-bit samples, held until the frames are tone-mapped together, counted twice).
    private func hold(_ pixels: PixelBuffer, after frames: [ImageFrame]) throws(WebImageError) {
        if let first = frames.first?.pixels, first.width != pixels.width || first.height != pixels.height {
            throw WebImageError(
                .decodeFailed, "the video's frames change size (\(first.width)x\(first.height), then \(pixels.width)x\(pixels.height))")
        }
        let perFrame = pixels.width * pixels.height * pixels.bytesPerPixel / 4
        guard (frames.count + 1) * perFrame <= limits.maximumPixelCount else {
            let depth = pixels.isHighBitDepth ? " at 16 bits (counted twice)" : ""
            throw WebImageError(
                .tooLarge,
                "\(frames.count + 1) frames of \(pixels.width)x\(pixels.height)\(depth) are over the \(limits.maximumPixelCount)-pixel limit"
            )
        }
    }

    /// The seconds between frames: the selection's, or the duration spread over them for a negative step.
    private func step(count: Int, duration: Double) throws(WebImageError) -> Double {
        guard selection.step < 0 else { return selection.step }
        guard duration > 0 else {
            throw WebImageError(
                .decodeFailed, "the video does not say how long it is, so a negative step cannot spread \(count) frames over it")
        }
        return duration / Double(count)
    }

    /// Where the reader stands: the time of the frame it holds, and whether the stream has ended.
    private struct FrameCursor {
        var time: Double?
        var hasEnded = false
        var decoded = 0
    }

    /// How a decoded frame becomes the pixels held: 8-bit RGBA, read at 16 bits first and
    /// tone-mapped when the stream is HDR, or kept at 16 bits.
    private struct FrameConversion {
        /// The stream's description before any frame is decoded.
        let stream: ColorDescription
        let keeps: Bool
        /// Several frames of an HDR stream are held at 16 bits and tone-mapped together, from one
        /// peak (``Image/reducedToEightBits()``), once all are decoded: each from its own peak, an
        /// animated preview's brightness would change from frame to frame.
        let tonesTogether: Bool

        init(stream: ColorDescription, keeps: Bool, together: Bool) {
            (self.stream, self.keeps, tonesTogether) = (stream, keeps, together && stream.isHDR && !keeps)
        }

        var readsSixteenBits: Bool { stream.isHDR || (keeps && stream.bitDepth > 8) }

        /// The frame decoded last; one alone tone-mapped from the peak the stream states by then
        /// (a light level in the frames' side data) or else from its brightest pixel.
        func pixels(of reader: VideoReader) throws(WebImageError) -> PixelBuffer {
            guard readsSixteenBits else { return try reader.pixels() }
            let pixels = try reader.pixels(highBitDepth: true)
            return keeps || tonesTogether ? pixels : pixels.reducedToEightBits(describedBy: reader.color())
        }
    }

    /// The frame for `target`, converted; nil when the video ended before it (for a frame after
    /// the first: the first is then the last frame there is).
    private func frame(
        at target: Double, first: Bool, keyframes: Bool, reader: VideoReader, conversion: FrameConversion, cursor: inout FrameCursor
    ) throws(WebImageError) -> PixelBuffer? {
        if first, selection.second == nil {
            // The first keyframe: the stream's first frame, nothing sought.
            guard try next(reader, keyframesOnly: true, cursor: &cursor) else { throw noFrame() }
            return try conversion.pixels(of: reader)
        }
        if keyframes {
            try reader.seek(to: target)
            guard try next(reader, keyframesOnly: true, cursor: &cursor) else {
                return first ? try lastFrame(reader, conversion, cursor) : nil
            }
            return try conversion.pixels(of: reader)
        }
        let tolerance = reader.info.frame_rate > 0 ? 0.5 / reader.info.frame_rate : 0.001
        if !first, let time = cursor.time, time >= target - tolerance {
            // A step shorter than a frame: the frame held serves again.
            return try conversion.pixels(of: reader)
        }
        // Decoding forward is cheaper than seeking when the target is near; a keyframe lies at or
        // before it either way.
        if cursor.time.map({ target < $0 || target - $0 > 2 }) ?? (target > 0) {
            try reader.seek(to: target)
            cursor = FrameCursor(time: nil, hasEnded: false, decoded: cursor.decoded)
        }
        while true {
            guard try next(reader, keyframesOnly: false, cursor: &cursor) else {
                return first ? try lastFrame(reader, conversion, cursor) : nil
            }
            if let time = cursor.time, time >= target - tolerance { return try conversion.pixels(of: reader) }
        }
    }

    /// Whether keyframes are taken instead of exact frames: asked for, or the steps are longer
    /// than the longest interval between keyframes.
    private func takesKeyframes(_ info: wiv_info, step: Double) -> Bool {
        selection.keyframesOnly
            || (selection.keyframesForLongSteps && selection.count > 1 && info.keyframe_interval > 0 && step > info.keyframe_interval)
    }

    /// Decodes the next frame into the reader; false at the end of the stream.
    private func next(_ reader: VideoReader, keyframesOnly: Bool, cursor: inout FrameCursor) throws(WebImageError) -> Bool {
        guard !cursor.hasEnded else { return false }
        guard cursor.decoded < selection.maximumDecodedFrames else {
            throw WebImageError(
                .tooLarge, "the video needs more than \(selection.maximumDecodedFrames) decoded frames to reach the one asked")
        }
        guard let time = try reader.nextFrame(keyframesOnly: keyframesOnly) else {
            cursor.hasEnded = true
            return false
        }
        cursor.decoded += 1
        cursor.time = time
        return true
    }

    /// The last frame decoded, for a time past the end.
    private func lastFrame(_ reader: VideoReader, _ conversion: FrameConversion, _ cursor: FrameCursor) throws(WebImageError)
        -> PixelBuffer
    {
        guard cursor.time != nil else { throw noFrame() }
        return try conversion.pixels(of: reader)
    }

    private func noFrame() -> WebImageError {
        WebImageError(.decodeFailed, "the video has no frame that decodes")
    }

    static func orientation(rotation: Int) -> ExifOrientation {
        switch rotation {
        case 90: .right
        case 180: .down
        case 270: .left
        default: .up
        }
    }
}
#endif
