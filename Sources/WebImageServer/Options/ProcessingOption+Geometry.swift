import Foundation
import WebImage

extension ProcessingOption {
    /// Size, crop, gravity, rotation: where the result's pixels come from.
    static let geometry: [ProcessingOption] = [
        ProcessingOption(["resize", "rs"], arguments: 8) { (parser, reader, options) throws(ProxyError) in
            if let type = try reader.resizingType(0) { options.resizingType = type }
            try parser.readSize(&reader, from: 1, into: &options)
        },
        ProcessingOption(["size", "s"], arguments: 7) { (parser, reader, options) throws(ProxyError) in
            try parser.readSize(&reader, from: 0, into: &options)
        },
        ProcessingOption(["resizing_type", "rt"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            if let type = try reader.resizingType(0) { options.resizingType = type }
        },
        ProcessingOption(["width", "w"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.width = try reader.integer(0) ?? options.width
        },
        ProcessingOption(["height", "h"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.height = try reader.integer(0) ?? options.height
        },
        ProcessingOption(["min-width", "mw"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.minWidth = try reader.integer(0) ?? options.minWidth
        },
        ProcessingOption(["min-height", "mh"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.minHeight = try reader.integer(0) ?? options.minHeight
        },
        ProcessingOption(["zoom", "z"], arguments: 2) { (_, reader, options) throws(ProxyError) in
            let x = try reader.positive(0)
            options.zoomX = x ?? options.zoomX
            options.zoomY = try reader.positive(1) ?? x ?? options.zoomY
        },
        ProcessingOption(["dpr"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.dpr = try reader.positive(0) ?? options.dpr
        },
        ProcessingOption(["enlarge", "el"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.enlarge = try reader.boolean(0) ?? options.enlarge
        },
        ProcessingOption(["extend", "ex"], arguments: 4) { (_, reader, options) throws(ProxyError) in
            options.extend = try reader.boolean(0) ?? options.extend
            options.extendGravity = try reader.gravity(from: 1, allowsSmart: false) ?? options.extendGravity
        },
        ProcessingOption(["extend_aspect_ratio", "extend_ar", "exar"], arguments: 4) { (_, reader, options) throws(ProxyError) in
            options.extendAspectRatio = try reader.boolean(0) ?? options.extendAspectRatio
            options.extendAspectRatioGravity = try reader.gravity(from: 1, allowsSmart: false) ?? options.extendAspectRatioGravity
        },
        ProcessingOption(["gravity", "g"], arguments: 3) { (_, reader, options) throws(ProxyError) in
            options.gravity = try reader.gravity(from: 0) ?? options.gravity
        },
        ProcessingOption(["crop", "c"], arguments: 5) { (_, reader, options) throws(ProxyError) in
            let width = try reader.number(0) ?? 0
            let height = try reader.number(1) ?? 0
            options.crop =
                width == 0 && height == 0 ? nil : ProcessingOptions.Crop(width: width, height: height, gravity: try reader.gravity(from: 2))
        },
        ProcessingOption(["trim", "t"], arguments: 4) { (_, reader, options) throws(ProxyError) in
            guard let threshold = try reader.number(0, maximum: 255) else {
                options.trim = nil  // imgproxy: an empty threshold turns trim off
                return
            }
            var trim = ProcessingOptions.Trim(threshold: threshold)
            trim.color = try reader.hexColor(at: 1)
            trim.equalHorizontal = try reader.boolean(2) ?? false
            trim.equalVertical = try reader.boolean(3) ?? false
            options.trim = trim
        },
        ProcessingOption(["padding", "pd"], arguments: 4) { (_, reader, options) throws(ProxyError) in
            options.padding = try reader.padding()
        },
        ProcessingOption(["rotate", "rot"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            let degrees = try reader.signedInteger(0) ?? 0
            guard degrees % 90 == 0 else { throw reader.failure("the angle must be a multiple of 90, not \(degrees)") }
            options.rotate = (degrees % 360 + 360) % 360
        },
        ProcessingOption(["auto_rotate", "ar"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.autoRotate = try reader.boolean(0) ?? options.autoRotate
        },
        ProcessingOption(["flip", "fl"], arguments: 2) { (_, reader, options) throws(ProxyError) in
            options.flipHorizontally = try reader.boolean(0) ?? options.flipHorizontally
            options.flipVertically = try reader.boolean(1) ?? options.flipVertically
        },
        ProcessingOption(["resizing_algorithm", "ra"], arguments: 1) { (_, reader, options) throws(ProxyError) in
            options.resizingAlgorithm = try reader.resizingAlgorithm(0) ?? .lanczos3
        },
        ProcessingOption(["crop_aspect_ratio", "crop_ar", "car"], arguments: 2) { (_, reader, options) throws(ProxyError) in
            let ratio = try reader.number(0, maximum: 10_000) ?? 0
            options.cropAspectRatio =
                ratio > 0 ? ProcessingOptions.CropAspectRatio(ratio: ratio, enlarge: try reader.boolean(1) ?? false) : nil
        },
    ]
}
