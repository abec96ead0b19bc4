import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import Tracing
import WebImageServer

#if WEBIMAGE_OTEL
import OTel
#endif

/// OpenTelemetry traces for the command, over OTLP/HTTP: off unless the environment asks for
/// them, and then configured by the standard `OTEL_*` variables, which swift-otel reads
/// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL` `http/protobuf`, `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and its argument, `OTEL_BSP_*`).
///
/// Only the command bootstraps a tracer; the libraries make their spans through
/// swift-distributed-tracing and so go wherever an application sends its own.
enum TraceExport {
    /// `WEBIMAGE_TRACING` as `serve` reads it (``TracingRequest/tracingSwitch(_:)``).
    static func tracingSwitch(_ environment: [String: String]) throws -> Bool? {
        do {
            return try TracingRequest.tracingSwitch(environment)
        } catch {
            throw ValidationError(error.message ?? error.description)
        }
    }

    /// The process-wide tracer bootstrapped, and the service that sends its spans (run it beside
    /// the work and stop it last, so that it flushes them); nil when traces are not requested.
    /// Also sets the logging metadata provider that puts `trace_id` and `span_id` in a traced
    /// request's log lines.
    ///
    /// - Throws: ``CommandFailure`` for a configuration swift-otel refuses, the gRPC protocol,
    ///   whose exporter is not built in, or `http/json` (``TracingRequest/refusal(ofProtocols:)``).
    static func bootstrap(switch explicit: Bool?, environment: [String: String]) throws -> (any Service)? {
        guard TracingRequest.isRequested(switch: explicit, environment: environment) else { return nil }
        #if WEBIMAGE_OTEL
        return try bootstrapExporter(environment: environment)
        #else
        throw CommandFailure("this build has no OTLP exporter (built with WEBIMAGE_WITHOUT_OTEL): unset the OTEL_* variables")
        #endif
    }

    #if WEBIMAGE_OTEL
    private static func bootstrapExporter(environment: [String: String]) throws -> (any Service)? {
        if let refusal = TracingRequest.refusal(ofProtocols: environment) { throw CommandFailure(refusal) }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "webimage"
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.traces.enabled = true
        configuration.diagnosticLogger = .custom(Logger(label: "webimage.otel"))
        // Its own start-up lines (each OTEL_* variable read) are info; OTEL_LOG_LEVEL brings them back.
        configuration.diagnosticLogLevel = .warning
        let backend: (factory: any Tracer, service: any Service)
        do {
            // The OTEL_* variables override these defaults here.
            let made = try OTel.makeTracingBackend(configuration: configuration)
            backend = (made.factory, made.service)
        } catch {
            throw CommandFailure("cannot start tracing: \(error)")
        }
        InstrumentationSystem.bootstrap(backend.factory)
        return backend.service
    }
    #endif

    /// Runs `body` with the exporter's `service` (when traced) beside it, then stops the service,
    /// which sends the spans still batched before this returns.
    static func running<T>(_ service: (any Service)?, _ body: () async throws -> T) async throws -> T {
        guard let service else { return try await body() }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: Logger(label: "webimage.otel")))
        let exporting = Task { try await group.run() }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        await group.triggerGracefulShutdown()
        _ = try? await exporting.value
        return try result.get()
    }

    /// `work` in a root span of its own called `name`, for one URL of a long list: the sampler
    /// (`OTEL_TRACES_SAMPLER`, such as `traceidratio` with `OTEL_TRACES_SAMPLER_ARG=0.01`) keeps
    /// or drops each URL's trace, and what the work loads is beneath it. Without a bootstrapped
    /// tracer, `work` as it is.
    static func traced(_ name: String, url: String, _ work: @escaping @Sendable () async throws -> Void)
        -> @Sendable () async throws -> Void
    {
        let tracer = InstrumentationSystem.tracer
        if tracer is NoOpTracer { return work }
        return {
            let span = tracer.startSpan(name, context: .topLevel)
            // Without the query, which may carry a token.
            span.attributes["url.full"] = String(url.prefix { $0 != "?" })
            defer { span.end() }
            do {
                try await ServiceContext.withValue(span.context) { try await work() }
            } catch {
                span.fail(error)
                throw error
            }
        }
    }

    /// The logging metadata provider of a traced run: the current span's `trace_id` and `span_id`.
    static var logMetadata: Logger.MetadataProvider? {
        #if WEBIMAGE_OTEL
        OTel.makeLoggingMetadataProvider()
        #else
        nil
        #endif
    }
}
