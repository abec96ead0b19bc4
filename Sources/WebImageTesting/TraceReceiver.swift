public import Foundation

/// An OpenTelemetry collector's trace endpoint on 127.0.0.1, for tests: it takes OTLP/HTTP in
/// its JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) at `/v1/traces`, answers 200, and
/// keeps every span it is sent, which tests wait for without sleeping.
///
/// ```swift
/// let receiver = try await TraceReceiver.start()
/// // run the program with OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, then:
/// let span = try await receiver.waitForSpan(named: "GET", inTrace: "0af7651916cd43dd8448eb211c80319c")
/// ```
public final class TraceReceiver: Sendable {
    /// One span as the receiver read it. Ids are lowercase hex (OTLP's JSON encoding writes them
    /// as hex; swift-otel's, as protobuf's JSON does bytes, in base64: both are read).
    public struct Span: Sendable, Equatable {
        public let traceID: String
        public let spanID: String
        /// Empty for a root span.
        public let parentSpanID: String
        public let name: String
        /// OTLP's kind: 1 internal, 2 server, 3 client.
        public let kind: Int
        /// Each attribute's value as text.
        public let attributes: [String: String]
        /// The `service.name` of the resource that sent it.
        public let serviceName: String?
    }

    private let server: OriginServer
    private let log = EventLog<Span>()

    private init(server: OriginServer) {
        self.server = server
    }

    /// A receiver listening on an ephemeral port of 127.0.0.1.
    public static func start() async throws -> TraceReceiver {
        let receiver = TraceReceiver(server: try await OriginServer.start())
        receiver.server.route("/v1/traces") { [log = receiver.log] request in
            guard request.method == "POST", let spans = try? Self.spans(in: Data(request.body)) else {
                return OriginResponse(status: 400, headers: [("Content-Type", "text/plain")], body: Array("not OTLP JSON traces\n".utf8))
            }
            for span in spans { log.record(span) }
            return OriginResponse(headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        }
        return receiver
    }

    /// The base URL for `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter adds `/v1/traces`).
    public var endpoint: String { server.baseURL }

    /// Every span received so far, in order of arrival.
    public var spans: [Span] { log.events }

    /// Waits for a span called `name` in the trace `traceID` (hex).
    /// - Throws: ``EventLogTimeout`` when none comes within `timeout`.
    @discardableResult
    public func waitForSpan(named name: String, inTrace traceID: String, timeout: Duration = .seconds(10)) async throws -> Span {
        try await waitForSpan("a span \(name) in trace \(traceID)", timeout: timeout) { $0.name == name && $0.traceID == traceID }
    }

    /// Waits for the first span, received or to come, that satisfies `predicate`.
    /// - Throws: ``EventLogTimeout`` when none comes within `timeout`.
    @discardableResult
    public func waitForSpan(
        _ description: String, timeout: Duration = .seconds(10), where predicate: @escaping @Sendable (Span) -> Bool
    ) async throws -> Span {
        try await log.waitFor(timeout: timeout, description, where: predicate)
    }

    /// Stops listening.
    public func shutdown() async throws {
        try await server.shutdown()
    }

    /// The spans of an OTLP `ExportTraceServiceRequest` in JSON.
    static func spans(in body: Data) throws -> [Span] {
        guard let root = try JSONSerialization.jsonObject(with: body) as? [String: Any] else { return [] }
        var spans: [Span] = []
        for resourceSpans in root["resourceSpans"] as? [[String: Any]] ?? [] {
            let resource = attributes(of: (resourceSpans["resource"] as? [String: Any])?["attributes"])
            for scope in resourceSpans["scopeSpans"] as? [[String: Any]] ?? [] {
                for span in scope["spans"] as? [[String: Any]] ?? [] {
                    spans.append(
                        Span(
                            traceID: hex(span["traceId"]), spanID: hex(span["spanId"]), parentSpanID: hex(span["parentSpanId"]),
                            name: span["name"] as? String ?? "", kind: (span["kind"] as? NSNumber)?.intValue ?? 0,
                            attributes: attributes(of: span["attributes"]), serviceName: resource["service.name"]))
                }
            }
        }
        return spans
    }

    /// An id as hex: kept when it is hex already, else read as base64.
    private static func hex(_ value: Any?) -> String {
        guard let text = value as? String, !text.isEmpty else { return "" }
        if text.count == 32 || text.count == 16, text.allSatisfy(\.isHexDigit) { return text.lowercased() }
        guard let bytes = Data(base64Encoded: text) else { return text }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// OTLP's `KeyValue` list as text values.
    private static func attributes(of list: Any?) -> [String: String] {
        var result: [String: String] = [:]
        for entry in list as? [[String: Any]] ?? [] {
            guard let key = entry["key"] as? String, let value = entry["value"] as? [String: Any], let first = value.first else { continue }
            result[key] = "\(first.value)"
        }
        return result
    }
}
