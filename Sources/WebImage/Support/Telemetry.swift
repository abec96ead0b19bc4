public import CoreMetrics
public import Logging

/// Where the library's logs and metrics go.
///
/// The library never prints. Each component logs through a swift-log `Logger` labelled
/// `webimage.<component>` (`webimage.cache.memory`, `webimage.cache.disk`, `webimage.downloader`,
/// ...), so an application routes or silences them with `LoggingSystem.bootstrap`. Metrics go to
/// swift-metrics under the names in ``MetricName``, with the dimensions each name documents.
///
/// The default sends both to the process-wide systems; a test or an application that runs
/// several pipelines can give each its own factories.
public struct Telemetry: Sendable {
    /// Makes the log handler for a label; nil uses the process-wide `LoggingSystem`.
    public var logHandlerFactory: (@Sendable (String) -> any LogHandler)?
    /// The metrics backend; nil uses the process-wide `MetricsSystem`.
    public var metricsFactory: (any MetricsFactory)?

    /// Logs and metrics to the process-wide systems.
    public static let `default` = Telemetry()

    /// Creates a telemetry sink; pass nil to use the process-wide system for either.
    public init(
        logHandlerFactory: (@Sendable (String) -> any LogHandler)? = nil,
        metricsFactory: (any MetricsFactory)? = nil
    ) {
        self.logHandlerFactory = logHandlerFactory
        self.metricsFactory = metricsFactory
    }

    /// The logger for a component, labelled `webimage.<component>`.
    public func logger(_ component: String) -> Logger {
        let label = "webimage." + component
        guard let logHandlerFactory else { return Logger(label: label) }
        return Logger(label: label, factory: logHandlerFactory)
    }

    /// A counter for `metric`.
    public func counter(_ metric: MetricName, dimensions: [(String, String)] = []) -> Counter {
        Counter(label: metric.rawValue, dimensions: dimensions, factory: metricsFactory ?? MetricsSystem.factory)
    }

    /// A timer for `metric`.
    public func timer(_ metric: MetricName, dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: metric.rawValue, dimensions: dimensions, factory: metricsFactory ?? MetricsSystem.factory)
    }
}
