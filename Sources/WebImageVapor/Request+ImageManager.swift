#if Vapor
public import Foundation
public import Vapor
public import WebImage
import Tracing

extension Request {
    /// Loads an image for this request through `manager`
    /// (``ImageManager/image(for:options:context:)``), within the request's trace: the load runs
    /// in the request's `serviceContext` (which Vapor's `TracingMiddleware` sets), so the
    /// manager's spans (the download's) are beneath the request's span and the origin is sent
    /// its trace. A load that fails is logged on the request's logger (with its request id) at
    /// `notice`, then thrown; a cancelled one is only thrown.
    ///
    /// ```swift
    /// app.get("avatar", ":user") { req async throws -> Response in
    ///     let loaded = try await req.image(for: avatarURL(req.parameters.get("user")), options: .avoidDecodeImage)
    ///     return Response(body: .init(data: loaded.data ?? Data()))
    /// }
    /// ```
    public func image(
        for url: URL, options: LoadOptions = [], context: LoadContext = LoadContext(), manager: ImageManager = .shared
    ) async throws -> ImageResult {
        do {
            return try await ServiceContext.withValue(serviceContext) {
                try await manager.image(for: url, options: options, context: context)
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.notice("image load failed", metadata: ["url": "\(url.absoluteString)", "error": "\(error)"])
            throw error
        }
    }
}
#endif
