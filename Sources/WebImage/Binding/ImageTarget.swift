public import Foundation

/// Anything with an image slot: a view model, a GUI toolkit's image view, a terminal renderer
/// (SDWebImage's `UIImageView+WebCache`, for any view-like object).
///
/// Conform by keeping an ``ImageTargetState`` and showing what ``setImage(_:data:cacheType:url:forKey:)``
/// is given; every target then has ``setImage(with:placeholder:options:context:progress:completed:)``.
///
/// ```swift
/// final class Thumbnail: ImageTarget {
///     let imageLoadState = ImageTargetState()
///     func setImage(_ image: Image?, data: Data?, cacheType: ImageCacheType, url: URL?, forKey key: String) {
///         // draw it
///     }
/// }
/// ```
public protocol ImageTarget: AnyObject, Sendable {
    /// The target's loads, one per operation key.
    var imageLoadState: ImageTargetState { get }
    /// Shows `image` (nil clears the slot) in the slot named `key`. Called on whichever thread
    /// the result arrived, or on the context's callback queue; never for a load that a newer
    /// one under the same key replaced.
    func setImage(_ image: Image?, data: Data?, cacheType: ImageCacheType, url: URL?, forKey key: String)
}

extension ImageTarget {
    /// The operation key used when the context names none: the target's type name, as in SDWebImage.
    public var defaultOperationKey: String {
        String(describing: type(of: self))
    }

    /// Loads `url` into the target (SDWebImage's `sd_setImage(with:placeholderImage:options:context:progress:completed:)`).
    ///
    /// A load already running under the same operation key (the context's
    /// ``LoadContext/setImageOperationKey``, default ``defaultOperationKey``) is cancelled first.
    /// The placeholder shows at once, unless `.delayPlaceholder` (then only if the load fails).
    /// The image is shown when it arrives, unless `.avoidAutoSetImage` leaves that to
    /// `completed`; partial images of a `.progressiveLoad` are shown too, and reach `completed`
    /// only with `.avoidAutoSetImage`. A nil URL shows the placeholder and reports
    /// `WebImageError.Code.invalidURL`. A result of a load that a newer one replaced is dropped.
    @discardableResult
    public func setImage(
        with url: URL?,
        placeholder: Image? = nil,
        options: LoadOptions = [],
        context: LoadContext = LoadContext(),
        progress: (@Sendable (_ received: Int64, _ expected: Int64?, _ url: URL) -> Void)? = nil,
        completed: (@Sendable (Result<ImageResult, WebImageError>) -> Void)? = nil
    ) -> LoadOperation? {
        let key = context.setImageOperationKey ?? defaultOperationKey
        let state = imageLoadState
        let generation = state.begin(key, url: url)
        let showsPlaceholderNow = !options.contains(.delayPlaceholder) || url == nil
        if showsPlaceholderNow {
            state.ifCurrent(key, generation: generation, finish: false) {
                setImage(placeholder, data: nil, cacheType: .none, url: url, forKey: key)
            }
        }
        let manager = context.customManager ?? .shared
        let operation = manager.loadImage(with: url, options: options, context: context, progress: progress) { [weak self] result in
            guard let self else { return }
            let isFinal = (try? result.get().isFinished) ?? true
            state.ifCurrent(key, generation: generation, finish: isFinal) {
                self.show(result, placeholder: placeholder, options: options, url: url, key: key)
                if isFinal || options.contains(.avoidAutoSetImage) { completed?(result) }
            }
        }
        state.attach(operation, to: key, generation: generation)
        return operation
    }

    /// The URL of the latest load under `key` (default ``defaultOperationKey``).
    public func currentImageURL(forKey key: String? = nil) -> URL? {
        imageLoadState.url(key ?? defaultOperationKey)
    }

    /// Cancels the load under `key` (default ``defaultOperationKey``); its result will not be shown.
    public func cancelImageLoad(forKey key: String? = nil) {
        imageLoadState.cancel(key ?? defaultOperationKey)
    }

    private func show(_ result: Result<ImageResult, WebImageError>, placeholder: Image?, options: LoadOptions, url: URL?, key: String) {
        switch result {
        case .success(let loaded):
            guard !options.contains(.avoidAutoSetImage), let image = loaded.image else { return }
            setImage(image, data: loaded.data, cacheType: loaded.cacheType, url: url, forKey: key)
        case .failure:
            if options.contains(.delayPlaceholder) {
                setImage(placeholder, data: nil, cacheType: .none, url: url, forKey: key)
            }
        }
    }
}
