package import WebImageCore

/// Whether the environment asks `webimage` for OpenTelemetry traces, and why a protocol it names
/// cannot be used: the decision, made from the variables alone; the command bootstraps the
/// exporter (swift-otel), which reads the standard `OTEL_*` variables itself.
package enum TracingRequest {
    /// `WEBIMAGE_TRACING` (or imgproxy's `IMGPROXY_OPEN_TELEMETRY_ENABLE`) read by `serve`'s
    /// `tracing` row, for the commands that do not read every setting; nil when neither is set.
    /// - Throws: `WebImageError.Code.invalidArgument` naming the variable, for a value that is
    ///   not a boolean.
    package static func tracingSwitch(_ environment: [String: String]) throws(WebImageError) -> Bool? {
        try ServeSettings.value(of: "TRACING", environment: environment, SettingText.boolean)
    }

    /// Whether the environment asks for traces: the tracing switch (``tracingSwitch(_:)``) when
    /// set, else an OTLP endpoint or
    /// `OTEL_TRACES_EXPORTER` naming an exporter; never with `OTEL_SDK_DISABLED=true` or
    /// `OTEL_TRACES_EXPORTER=none` (the OpenTelemetry SDK's environment variables,
    /// https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
    package static func isRequested(switch explicit: Bool?, environment: [String: String]) -> Bool {
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return false }
        let exporter = environment["OTEL_TRACES_EXPORTER"]?.lowercased()
        if exporter == "none" { return false }
        if let explicit { return explicit }
        let endpoint = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].contains { environment[$0]?.isEmpty == false }
        return endpoint || exporter == "otlp" || exporter == "console"
    }

    /// Why the protocol the environment names cannot be used, or nil. gRPC is not built in (its
    /// trait would add grpc-swift to the build); `http/json` is refused rather than exported
    /// wrong: swift-otel 1.6 writes OTLP/JSON with protobuf's JSON mapping, which puts trace and
    /// span ids in base64 where OTLP/JSON requires hex
    /// (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding), and the OpenTelemetry
    /// Collector answers such an export 400 (opentelemetry-collector#8720), so every span would
    /// be lost. A collector's port 4318 takes `http/protobuf` as well.
    package static func refusal(ofProtocols environment: [String: String]) -> String? {
        let protocols = ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"].compactMap { environment[$0]?.lowercased() }
        if protocols.contains("grpc") {
            return "OTLP over gRPC is not built in: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (a collector's port 4318)"
        }
        if protocols.contains("http/json") {
            return "OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported: its exporter writes trace and span ids in base64, "
                + "which OTLP/JSON forbids and a collector refuses (400); set http/protobuf, which the same endpoint takes"
        }
        return nil
    }
}
