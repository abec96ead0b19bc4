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
    /// Whether the environment asks for traces: `WEBIMAGE_TRACING` (or imgproxy's
    /// `IMGPROXY_OPEN_TELEMETRY_ENABLE`, mapped to it) when set, else an OTLP endpoint or
    /// `OTEL_TRACES_EXPORTER` naming an exporter; never with `OTEL_SDK_DISABLED=true` or
    /// `OTEL_TRACES_EXPORTER=none`.
    /// `WEBIMAGE_TRACING` as `serve` reads it, for the commands that do not read every setting;
    /// nil when it is not set.
    static func tracingSwitch(_ environment: [String: String]) throws -> Bool? {
        guard let text = environment["WEBIMAGE_TRACING"], !text.isEmpty else { return nil }
        do {
            return try SettingText.boolean(text)
        } catch {
            throw ValidationError("WEBIMAGE_TRACING: \(error.message ?? error.description)")
        }
    }

    static func isRequested(switch explicit: Bool?, environment: [String: String]) -> Bool {
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return false }
        let exporter = environment["OTEL_TRACES_EXPORTER"]?.lowercased()
        if exporter == "none" { return false }
        if let explicit { return explicit }
        let endpoint = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].contains { environment[$0]?.isEmpty == false }
        return endpoint || exporter == "otlp" || exporter == "console"
    }

    /// The process-wide tracer bootstrapped, and the service that sends its spans (run it beside
    /// the work and stop it last, so that it flushes them); nil when traces are not requested.
    /// Also sets the logging metadata provider that puts `trace_id` and `span_id` in a traced
    /// request's log lines.
    ///
    /// - Throws: ``CommandFailure`` for a configuration swift-otel refuses, the gRPC protocol,
    ///   whose exporter is not built in (its trait would add grpc-swift to the build), or
    ///   `http/json` (``refusal(ofProtocols:)``).
    static func bootstrap(switch explicit: Bool?, environment: [String: String]) throws -> (any Service)? {
        guard isRequested(switch: explicit, environment: environment) else { return nil }
        #if WEBIMAGE_OTEL
        return try bootstrapExporter(environment: environment)
        #else
        throw CommandFailure("this build has no OTLP exporter (built with WEBIMAGE_WITHOUT_OTEL): unset the OTEL_* variables")
        #endif
    }

    /// Whether this build has the exporter: sanitizer builds leave it out (Package.swift).
    static var isBuiltIn: Bool {
        #if WEBIMAGE_OTEL
        true
        #else
        false
        #endif
    }

    /// Why the protocol the environment names cannot be used, or nil. gRPC is not built in;
    /// `http/json` is refused rather than exported wrong: swift-otel 1.6 writes OTLP/JSON with
    /// protobuf's JSON mapping, which puts trace and span ids in base64 where OTLP/JSON requires
    /// hex (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding), and the
    /// OpenTelemetry Collector answers such an export 400 (opentelemetry-collector#8720), so
    /// every span would be lost. A collector's port 4318 takes `http/protobuf` as well.
    static func refusal(ofProtocols environment: [String: String]) -> CommandFailure? {
        let protocols = ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"].compactMap { environment[$0]?.lowercased() }
        if protocols.contains("grpc") {
            return CommandFailure("OTLP over gRPC is not built in: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (a collector's port 4318)")
        }
        if protocols.contains("http/json") {
            return CommandFailure(
                "OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported: its exporter writes trace and span ids in base64, "
                    + "which OTLP/JSON forbids and a collector refuses (400); set http/protobuf, which the same endpoint takes")
        }
        return nil
    }

    #if WEBIMAGE_OTEL
    private static func bootstrapExporter(environment: [String: String]) throws -> (any Service)? {
        if let refusal = refusal(ofProtocols: environment) { throw refusal }
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
