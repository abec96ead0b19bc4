import Foundation
import WebImage

/// The common request in YCbCr: a JPEG source resized (or only cut to the plan's size) into a
/// JPEG or a lossy WebP with nothing else asked, through ``JPEGPlanarResize`` instead of RGBA
/// pixels; the result is the general path's from the same decode to within rounding, a third
/// less work besides the entropy coding (for WebP, the conversion to YUV libwebp would make of
/// RGBA saved too).
extension ImageProcessor {
    /// The planar resize for this request and its output format, or nil when any part of it
    /// needs the general path: a source that is not a JPEG, an output format other than JPEG or
    /// WebP (or a choice of several), orientation or rotation to apply, a trim, pages, a colour
    /// profile or metadata to keep, padding, extension, filters, a watermark, progressive JPEG
    /// output, a nearest-neighbour resize, or any step besides the one resize or cut.
    /// `autoquality` and `max_bytes` search the encode of the same planes.
    func planarResize(
        header: ImageHeader, plan: ProcessingPlan, options: ProcessingOptions, rule: OutputFormatRule, thumbnail: ThumbnailSize?,
        sourceWidth: Int, hasWatermark: Bool
    ) -> (resize: JPEGPlanarResize, format: ImageFormat)? {
        let candidates = rule.candidates(source: .jpeg, animated: false, transparent: false)
        guard header.format == .jpeg, options.rotate == 0, !options.flipHorizontally, !options.flipVertically,
            !options.autoRotate || header.orientation == .up, options.trim == nil, options.page == 0, options.pages == 1,
            options.stripColorProfile, options.stripMetadata, options.padding == nil, !options.extend, !hasWatermark,
            candidates == [.jpeg] && !encoderSettings.jpegProgressive || candidates == [.webP]
        else { return nil }
        return resize(header: header, plan: plan, options: options, thumbnail: thumbnail, sourceWidth: sourceWidth)
            .map { ($0, candidates[0]) }
    }

    /// The planar resize of a request's plan, or nil when the plan has steps the planar path cannot take.
    private func resize(
        header: ImageHeader, plan: ProcessingPlan, options: ProcessingOptions, thumbnail: ThumbnailSize?, sourceWidth: Int
    ) -> JPEGPlanarResize? {
        let decoded =
            thumbnail.map { JPEGPlanarResize.decodedSize(width: header.width, height: header.height, target: ($0.width, $0.height)) }
            ?? (width: header.width, height: header.height)
        let steps = plan.transformers(
            options: options, decodedWidth: decoded.width, decodedHeight: decoded.height, sourceWidth: sourceWidth)
        switch steps.count {
        case 0:
            return JPEGPlanarResize(width: decoded.width, height: decoded.height, filter: .bilinear)
        case 1:
            if let cut = steps[0] as? CroppingTransformer, cut.x >= 0, cut.y >= 0, cut.width > 0, cut.height > 0,
                cut.x + cut.width <= decoded.width, cut.y + cut.height <= decoded.height
            {
                // At the decoded size itself every kernel copies: the cut is exact.
                let window = ResizeWindow(x: cut.x, y: cut.y, width: cut.width, height: cut.height)
                return JPEGPlanarResize(width: decoded.width, height: decoded.height, window: window, filter: .bilinear)
            }
            if let resize = steps[0] as? ResizingTransformer, resize.mode == .fill, resize.filter != .nearest {
                return JPEGPlanarResize(
                    width: resize.width, height: resize.height, window: resize.window, filter: resize.filter)
            }
            return nil
        default:
            return nil
        }
    }

    /// `data` through `resize` into `format` (JPEG or WebP) as three stages (decode, transform,
    /// encode, each its own span), or nil when the decode declines the file, or it has EXIF the
    /// request keeps part of (`keep_copyright`, asked before the pixels are decoded): the caller
    /// then takes the general path.
    func recompress(
        _ data: Data, _ resize: JPEGPlanarResize, as format: ImageFormat, header: ImageHeader, options: ProcessingOptions,
        spans: StageSpans, isCancelled: () -> Bool
    ) throws(ProxyError) -> Data? {
        let limits = SourceLimits(self, options.security)
        let planes: JPEGPlanarResize.Planes
        do {
            let decoded = try spans.measure("decode", attributes: [("image.format", "jpeg")]) { () throws(WebImageError) in
                try resize.decode(data, limits: DecodeLimits(maximumPixelCount: limits.decodedPixels)) { exif in
                    options.keepCopyright && CopyrightEXIF.kept(from: exif) != nil
                }
            }
            guard let decoded else { return nil }
            planes = decoded
        } catch {
            throw Self.proxyError(error)
        }
        try limits.check(frames: 1, width: header.width, height: header.height)
        try Self.check(isCancelled)
        let resized = spans.measure("transform", attributes: [("webimage.steps", "planar")]) { resize.resampled(planes) }
        try Self.check(isCancelled)
        var encoding = encodeOptions()
        return try spans.measure("encode", attributes: [("image.format", format.rawValue)]) { () throws(ProxyError) in
            // WebP's YUV made once, for every quality `autoquality` and `max_bytes` try.
            let yuv = format == .webP ? WebPCoder.YUVPlanes(resized) : nil
            return try encodeAtQuality(format, options: options, isCancelled: isCancelled) { quality throws(WebImageError) in
                guard let yuv else { return try resize.encode(resized, quality: quality) }
                encoding.quality = Double(quality) / 100
                return try WebPCoder.encode(yuv, options: encoding)
            }
        }
    }
}
