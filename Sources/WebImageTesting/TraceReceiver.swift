import Foundation

/// An OpenTelemetry collector's trace endpoint on 127.0.0.1, for tests: it takes OTLP/HTTP in
/// its binary protobuf encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`, the default) at
/// `/v1/traces`, answers 200, and keeps every span it is sent, which tests wait for without
/// sleeping.
///
/// ```swift
/// let receiver = try await TraceReceiver.start()
/// // run the program with OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, then:
/// let span = try await receiver.waitForSpan(named: "GET", inTrace: "0af7651916cd43dd8448eb211c80319c")
/// ```
public final class TraceReceiver: Sendable {
    /// One span as the receiver read it. Ids are lowercase hex.
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
            guard request.method == "POST", request.header("Content-Type") == "application/x-protobuf",
                let spans = try? OTLPWire.spans(in: request.body)
            else {
                return OriginResponse(
                    status: 400, headers: [("Content-Type", "text/plain")], body: Array("not OTLP protobuf traces\n".utf8))
            }
            for span in spans { log.record(span) }
            // An empty ExportTraceServiceResponse: full success.
            return OriginResponse(headers: [("Content-Type", "application/x-protobuf")], body: [])
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
}
