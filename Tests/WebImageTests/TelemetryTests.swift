import InMemoryLogging
import Logging
import MetricsTestKit
import Testing
import WebImage
import WebImageTestSupport

@Suite("Telemetry")
struct TelemetryTests {
    @Test("loggers are labelled webimage.<component> and go to the given handler")
    func logging() {
        let handler = InMemoryLogHandler()
        let telemetry = Telemetry(logHandlerFactory: { _ in handler })
        let logger = telemetry.logger("cache.disk")
        #expect(logger.label == "webimage.cache.disk")
        logger.warning("journal rebuilt")
        #expect(handler.entries.map(\.message.description) == ["journal rebuilt"])
    }

    @Test("metrics go to the given factory under their documented names")
    func metrics() throws {
        let metrics = TestMetrics()
        let telemetry = Telemetry(metricsFactory: metrics)
        let name = MetricName(rawValue: "webimage_test_total")
        telemetry.counter(name, dimensions: [("tier", "memory")]).increment(by: 3)
        telemetry.timer(name).recordNanoseconds(5)
        #expect(try metrics.expectCounter("webimage_test_total", [("tier", "memory")]).totalValue == 3)
        #expect(try metrics.expectTimer("webimage_test_total").lastValue == 5)
    }
}
