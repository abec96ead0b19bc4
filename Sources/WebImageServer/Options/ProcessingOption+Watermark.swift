import Foundation
import WebImage

extension ProcessingOption {
    /// The watermark: its placing, image or text, shadow, size and rotation.
    static let watermark: [ProcessingOption] = [
        ProcessingOption(["watermark", "wm"]) { (_, reader, options) throws(ProxyError) in
            // imgproxy takes up to 7 arguments, the last two for its paid edition.
            try reader.expect(at: 7)
            let placing = try reader.watermark()
            options.watermark = placing.with(extrasOf: options.watermark)
        },
        ProcessingOption(["watermark_url", "wmu"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            guard let text = reader.text(0), let bytes = URLSigner.bytes(base64URL: text),
                let string = String(bytes: bytes, encoding: .utf8),
                let url = URL(string: string), ["http", "https"].contains(url.scheme?.lowercased() ?? "")
            else { throw reader.failure("not the URL-safe base64 of an http(s) URL") }
            options.watermark = (options.watermark ?? ProcessingOptions.Watermark(opacity: 0)).with { $0.url = url }
        },
        ProcessingOption(["watermark_text", "wmt"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            guard let encoded = reader.text(0), let bytes = URLSigner.bytes(base64URL: encoded),
                let markup = String(bytes: bytes, encoding: .utf8)
            else { throw reader.failure("not the URL-safe base64 of UTF-8 text") }
            _ = try TextWatermark.svg(markup: markup)  // the markup's mistakes are the URL's: a 400 now
            options.watermark = (options.watermark ?? ProcessingOptions.Watermark(opacity: 0)).with { $0.text = markup }
        },
        ProcessingOption(["watermark_shadow", "wmsh"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            let sigma = try reader.number(0, maximum: TransformSpec.maximumBlurRadius) ?? 0
            options.watermark = (options.watermark ?? ProcessingOptions.Watermark(opacity: 0)).with { $0.shadow = sigma }
        },
        ProcessingOption(["watermark_size", "wms"], arguments: 2) { (_, reader, options) throws(ProxyError) in
            let width = try reader.integer(0, maximum: 100_000) ?? 0
            let height = try reader.integer(1, maximum: 100_000) ?? 0
            options.watermark = (options.watermark ?? ProcessingOptions.Watermark(opacity: 0)).with {
                $0.size = width > 0 || height > 0 ? (width, height) : nil
            }
        },
        ProcessingOption(["watermark_rotate", "wm_rot", "wmr"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            let degrees = try reader.signedNumber(0) ?? 0
            options.watermark = (options.watermark ?? ProcessingOptions.Watermark(opacity: 0)).with { $0.rotation = degrees }
        },
    ]
}
