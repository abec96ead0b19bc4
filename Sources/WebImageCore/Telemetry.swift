public import CoreMetrics
public import Logging
public import Tracing

/// Where the library's logs and metrics go.
///
/// The library never prints. Each component logs through a swift-log `Logger` labelled
/// `webimage.<component>` (`webimage.cache.memory`, `webimage.cache.disk`, `webimage.downloader`,
/// ...), so an application routes or silences them with `LoggingSystem.bootstrap`. Metrics go to
/// swift-metrics under the names in ``MetricName``, with the dimensions each name documents.
///
/// Spans go to ``tracer`` when it is set, otherwise to the process-wide tracer once one is
/// bootstrapped (`InstrumentationSystem`): downloads through AsyncHTTPClient's spans (and a
/// `traceparent` header sent to the origin), the proxy's requests and stages through its own.
/// Without either no span is made at all, which saves more than the rest of a request costs.
///
/// The default sends all of these to the process-wide systems; a test or an application that
/// runs several pipelines can give each its own.
public struct Telemetry: Sendable {
    /// Makes the log handler for a label; nil uses the process-wide `LoggingSystem`.
    public var logHandlerFactory: (@Sendable (String) -> any LogHandler)?
    /// The metrics backend; nil uses the process-wide `MetricsSystem`.
    public var metricsFactory: (any MetricsFactory)?
    /// The tracer for spans; nil uses the process-wide one when it is bootstrapped.
    public var tracer: (any Tracer)?

    /// Logs and metrics to the process-wide systems.
    public static let `default` = Telemetry()

    /// Creates a telemetry sink; pass nil to use the process-wide system for either.
    public init(
        logHandlerFactory: (@Sendable (String) -> any LogHandler)? = nil,
        metricsFactory: (any MetricsFactory)? = nil,
        tracer: (any Tracer)? = nil
    ) {
        self.logHandlerFactory = logHandlerFactory
        self.metricsFactory = metricsFactory
        self.tracer = tracer
    }

    /// The tracer spans go to: ``tracer``, else the bootstrapped process-wide one, else none.
    package var activeTracer: (any Tracer)? {
        if let tracer { return tracer }
        let global = InstrumentationSystem.tracer
        return global is NoOpTracer ? nil : global
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
