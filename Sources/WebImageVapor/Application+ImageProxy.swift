#if Vapor
public import Vapor
public import WebImageServer
import Logging
import WebImage

extension Application {
    /// An image proxy that logs through this application's logger and stops with it: when the
    /// application shuts down, the proxy flushes and closes its caches and shuts its downloader
    /// down (``ImageProxy/shutdown()``), after Vapor's server has stopped taking requests.
    ///
    /// The proxy keeps an HTTP client of its own rather than the application's `client`: its
    /// connections go through the address guard (``ImageServerConfiguration`` decides which
    /// sources may be reached), which a client the application also uses for other calls must
    /// not have.
    ///
    /// - Throws: `WebImageError` for a configuration the proxy refuses (``ImageServerConfiguration/validate()``)
    ///   or a cache directory that cannot be opened.
    public func makeImageProxy(configuration: ImageServerConfiguration) throws -> ImageProxy {
        let handler = logger.handler
        let proxy = try ImageProxy(configuration: configuration, telemetry: Telemetry(logHandlerFactory: { _ in handler }))
        lifecycle.use(ImageProxyShutdown(proxy: proxy))
        return proxy
    }
}

/// Shuts an image proxy down when its application stops.
private struct ImageProxyShutdown: LifecycleHandler {
    let proxy: ImageProxy

    func shutdownAsync(_ application: Application) async {
        await proxy.shutdown()
    }
}
#endif
