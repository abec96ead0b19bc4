public import Foundation

/// An ordered list of coders that dispatches on the sniffed format (SDWebImage's
/// `SDImageCodersManager`): the coder added last wins, so an application's coder overrides a
/// built-in one for the same format.
public final class CodersManager: Sendable {
    /// The built-in coders.
    public static let shared = CodersManager()

    private let coders: Locked<[any ImageCoder]>

    /// A manager with the given coders, the last one preferred; by default the built-in ones.
    public init(coders: [any ImageCoder] = [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder()]) {
        self.coders = Locked(coders)
    }

    /// Adds a coder ahead of every coder already there.
    public func add(_ coder: any ImageCoder) {
        coders.withLock { $0.append(coder) }
    }

    /// The coders, the preferred one last.
    public var all: [any ImageCoder] {
        coders.withLock { $0 }
    }

    /// Decodes `data` with the newest coder for its format.
    ///
    /// - Throws: ``WebImageError/Code/notAnImage`` when no format is recognised,
    ///   ``WebImageError/Code/unsupportedFormat`` when no coder handles it, or the coder's error.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws(WebImageError) -> Image {
        guard let format = ImageFormat(sniffing: data) else {
            throw WebImageError(.notAnImage, "no image signature in \(data.count) bytes")
        }
        guard let coder = all.last(where: { $0.canDecode(format) }) else {
            throw WebImageError(.unsupportedFormat, "no coder decodes \(format.rawValue)")
        }
        return try coder.decode(data, options: options)
    }

    /// Encodes `image` as `format` with the newest coder for it.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws(WebImageError) -> Data {
        guard let coder = all.last(where: { $0.canEncode(to: format) }) else {
            throw WebImageError(.unsupportedFormat, "no coder encodes \(format.rawValue)")
        }
        return try coder.encode(image, as: format, options: options)
    }
}
