import AsyncHTTPClient
import Foundation
import InMemoryTracing
import Testing
import WebImage
import WebImageServer
import WebImageTesting

import WebImageTestSupport

/// Traces (issue 41): `webimage serve` exports spans over OTLP/HTTP to a collector (here the test
/// kit's ``TraceReceiver`` on 127.0.0.1), a request's server span continues the W3C `traceparent`
/// it came with (https://www.w3.org/TR/trace-context/: `00-TRACEID-PARENTID-FLAGS`), its stages
/// are spans beneath it, the origin is sent the same trace, and its log lines carry the trace id.
@Suite("Tracing")
struct TracingTests {
    static let traceID = "0af7651916cd43dd8448eb211c80319c"
    static let callerSpanID = "b7ad6b7169203331"

    @Test(
        "a traced request: a server span under the incoming traceparent, its stages beneath it, the origin told, trace_id logged",
        .disabled(if: Sanitizer.isActive, "a sanitizer build has no OTLP exporter (Package.swift, WEBIMAGE_WITHOUT_OTEL)"))
    func tracedRequest() async throws {
        let receiver = try await TraceReceiver.start()
        let origin = try await OriginServer.start()
        origin.route("/photo.jpg", .ok(Array(try Fixture.data("gradient.jpg")), contentType: "image/jpeg"))
        let directory = try TemporaryDirectory("serve-traced")
        let errors = directory.url.appendingPathComponent("stderr.log")
        var environment = ProcessInfo.processInfo.environment
        environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        // The batch processor's delay, in milliseconds: spans go out soon after they end.
        environment["OTEL_BSP_SCHEDULE_DELAY"] = "50"
        let server = try ChildProcess(
            ChildProcess.builtProduct("webimage"),
            [
                "serve", "--bind", "127.0.0.1:0", "--allow-unsigned", "--allow-loopback-sources", "--result-cache-dir", directory.path,
                "--log-format", "json",
            ], environment: environment, standardError: errors)
        // With --log-format json, the address is a field of the JSON line on standard output.
        let listening = try await server.waitForLine { $0.contains("\"msg\":\"listening\"") }
        let announced = try JSONSerialization.jsonObject(with: Data(listening.utf8)) as? [String: Any]
        let address = try #require(announced?["address"] as? String)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var request = HTTPClientRequest(url: "\(address)/unsafe/rs:fit:50:50/plain/\(origin.url("/photo.jpg"))")
        request.headers.add(name: "traceparent", value: "00-\(Self.traceID)-\(Self.callerSpanID)-01")
        let first = try await client.execute(request, timeout: .seconds(30))
        #expect(first.status.code == 200)
        _ = try await first.body.collect(upTo: 1 << 20)
        let again = try await client.execute(request, timeout: .seconds(30))
        _ = try await again.body.collect(upTo: 1 << 20)

        // The server spans (the second request's a memory hit) and the stages beneath the first,
        // in the caller's trace.
        let traceID = Self.traceID
        let store = try await receiver.waitForSpan(named: "store", inTrace: traceID)
        let hit = try await receiver.waitForSpan("the second request's server span") {
            $0.traceID == traceID && $0.kind == 2 && $0.attributes["webimage.cache"] == "memory"
        }
        #expect(hit.parentSpanID == Self.callerSpanID)
        let spans = receiver.spans.filter { $0.traceID == Self.traceID }
        let root = try #require(spans.first { $0.kind == 2 && $0.attributes["webimage.cache"] == "processed" }, "\(spans)")
        #expect(root.parentSpanID == Self.callerSpanID, "the server span continues the incoming traceparent")
        #expect(root.attributes["http.response.status_code"] == "200" && root.attributes["http.request.method"] == "GET")
        #expect(root.attributes["url.path"]?.hasPrefix("/rs:fit:50:50/plain/") == true, "the path without its signature")
        #expect(root.serviceName == "webimage")
        func child(_ name: String, of parent: TraceReceiver.Span) throws -> TraceReceiver.Span {
            try #require(spans.first { $0.name == name && $0.parentSpanID == parent.spanID }, "\(name) beneath \(parent.name)")
        }
        _ = try child("result cache", of: root)
        let fetch = try child("fetch", of: root)
        let process = try child("process", of: root)
        #expect(store.parentSpanID == root.spanID)
        let decode = try child("decode", of: process)
        #expect(decode.attributes["image.format"] == "jpeg")
        _ = try child("transform", of: process)
        #expect(try child("encode", of: process).attributes["image.format"] == "jpeg")
        // The download: a client span beneath the fetch, and the origin told that span.
        let download = try #require(spans.first { $0.kind == 3 && $0.parentSpanID == fetch.spanID }, "the download's client span")
        #expect(download.attributes["http.response.status_code"] == "200" && download.attributes["url.path"] == "/photo.jpg")
        let sent = try #require(origin.requests(to: "/photo.jpg").first?.header("traceparent"))
        #expect(sent == "00-\(Self.traceID)-\(download.spanID)-01", "the origin continues the same trace")

        try await client.shutdown()
        server.terminate()
        #expect(try await server.waitForExit().status == 0)
        let lines = try String(contentsOf: errors, encoding: .utf8).split(separator: "\n")
        let access = try lines.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["msg"] as? String == "request" }
        #expect(access.count == 2)
        #expect(access.allSatisfy { $0["trace_id"] as? String == Self.traceID }, "each line of a traced request carries its trace id")
        #expect(access.map { $0["cache"] as? String } == ["processed", "memory"], "the access line names the tier")
        #expect(access.allSatisfy { ($0["path"] as? String)?.hasPrefix("/rs:fit:50:50/plain/") == true }, "no signature in the log")
        try await origin.shutdown()
        try await receiver.shutdown()
    }

    @Test(
        "prefetch: a root span per URL with its download beneath, the origin told each URL's trace; untraced, nothing sent",
        .disabled(if: Sanitizer.isActive, "a sanitizer build has no OTLP exporter (Package.swift, WEBIMAGE_WITHOUT_OTEL)"))
    func prefetchSpans() async throws {
        let receiver = try await TraceReceiver.start()
        let origin = try await OriginServer.start()
        let jpeg = Array(try Fixture.data("gradient.jpg"))
        for name in ["a", "b", "c"] { origin.route("/\(name).jpg", .ok(jpeg, contentType: "image/jpeg")) }
        let directory = try TemporaryDirectory("prefetch-traced")
        let list = directory.url.appendingPathComponent("list.txt")
        try "\(origin.url("/a.jpg"))\n\(origin.url("/b.jpg"))\n".write(to: list, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = directory.path
        environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = receiver.endpoint + "/v1/traces"
        let run = try ChildProcess(ChildProcess.builtProduct("webimage"), ["prefetch", "-i", list.path], environment: environment)
        #expect(try await run.waitForExit().status == 0)
        // The exporter is stopped, and so flushed, before the command exits: every span is in.
        let roots = receiver.spans.filter { $0.name == "prefetch" }
        #expect(roots.count == 2 && roots.allSatisfy { $0.parentSpanID.isEmpty })
        for path in ["/a.jpg", "/b.jpg"] {
            let root = try #require(roots.first { $0.attributes["url.full"] == origin.url(path).absoluteString })
            let download = try #require(receiver.spans.first { $0.kind == 3 && $0.parentSpanID == root.spanID }, "\(path)'s download")
            #expect(origin.requests(to: path).first?.header("traceparent") == "00-\(root.traceID)-\(download.spanID)-01")
        }

        environment.removeValue(forKey: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        try "\(origin.url("/c.jpg"))\n".write(to: list, atomically: true, encoding: .utf8)
        let untraced = try ChildProcess(ChildProcess.builtProduct("webimage"), ["prefetch", "-i", list.path], environment: environment)
        #expect(try await untraced.waitForExit().status == 0)
        #expect(origin.requests(to: "/c.jpg").count == 1 && origin.requests(to: "/c.jpg").first?.header("traceparent") == nil)
        try await origin.shutdown()
        try await receiver.shutdown()
    }

    @Test("traces are off unless the environment asks; gRPC and http/json are refused with a reason")
    func environmentSwitch() throws {
        #expect(!TracingRequest.isRequested(switch: nil, environment: [:]))
        #expect(TracingRequest.isRequested(switch: nil, environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"]))
        #expect(
            TracingRequest.isRequested(switch: nil, environment: ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"]))
        #expect(TracingRequest.isRequested(switch: nil, environment: ["OTEL_TRACES_EXPORTER": "otlp"]))
        #expect(TracingRequest.isRequested(switch: true, environment: [:]), "WEBIMAGE_TRACING / IMGPROXY_OPEN_TELEMETRY_ENABLE")
        #expect(!TracingRequest.isRequested(switch: false, environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"]))
        #expect(!TracingRequest.isRequested(switch: true, environment: ["OTEL_SDK_DISABLED": "true"]))
        #expect(
            !TracingRequest.isRequested(switch: nil, environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_TRACES_EXPORTER": "none"]))
        #expect(try TracingRequest.tracingSwitch(["WEBIMAGE_TRACING": "yes"]) == true)
        #expect(try TracingRequest.tracingSwitch([:]) == nil)
        // The serve row's reading: imgproxy's variable stands for it, and WEBIMAGE_ wins.
        #expect(try TracingRequest.tracingSwitch(["IMGPROXY_OPEN_TELEMETRY_ENABLE": "true"]) == true)
        #expect(try TracingRequest.tracingSwitch(["IMGPROXY_OPEN_TELEMETRY_ENABLE": "true", "WEBIMAGE_TRACING": "0"]) == false)
        let refused = #expect(throws: WebImageError.self) { try TracingRequest.tracingSwitch(["WEBIMAGE_TRACING": "maybe"]) }
        #expect(refused?.message?.hasPrefix("WEBIMAGE_TRACING: ") == true, "\(String(describing: refused))")
        #expect(TracingRequest.refusal(ofProtocols: ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"])?.contains("http/protobuf") == true)
        // swift-otel's OTLP/JSON has base64 ids, which a collector answers 400
        // (opentelemetry-collector#8720): refused, per signal too.
        let json = try #require(TracingRequest.refusal(ofProtocols: ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "HTTP/JSON"]))
        #expect(json.contains("http/protobuf"), "the message names what to set")
        #expect(TracingRequest.refusal(ofProtocols: ["OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"]) == nil)
        #expect(TracingRequest.refusal(ofProtocols: [:]) == nil)
    }

    @Test(
        "the command refuses gRPC and http/json at start, naming what to set, before it reads a list or sends a span",
        .disabled(if: Sanitizer.isActive, "a sanitizer build has no OTLP exporter and refuses any OTEL_* tracing at start"))
    func refusedAtStart() async throws {
        let directory = try TemporaryDirectory("trace-refused")
        let list = directory.url.appendingPathComponent("list.txt")
        try "http://127.0.0.1:9/never.jpg\n".write(to: list, atomically: true, encoding: .utf8)
        for (variable, value, named) in [
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "gRPC"), ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json", "http/protobuf"),
        ] {
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CACHE_HOME"] = directory.path
            environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"
            environment[variable] = value
            let errors = directory.url.appendingPathComponent("\(value.replacingOccurrences(of: "/", with: "-")).log")
            let run = try ChildProcess(
                ChildProcess.builtProduct("webimage"), ["prefetch", "-i", list.path], environment: environment, standardError: errors)
            #expect(try await run.waitForExit().status != 0, "\(variable)=\(value)")
            #expect(try String(contentsOf: errors, encoding: .utf8).contains(named), "\(variable)=\(value)")
        }
    }

    @Test("an ImageServer given a tracer makes the same spans in process; without one the origin is sent no traceparent")
    func inProcessTracer() async throws {
        let tracer = InMemoryTracer()
        try await ServerHarness.with(tracer: tracer) { harness in
            harness.origin.route("/photo.jpg", .ok(Array(try Fixture.data("gradient.jpg")), contentType: "image/jpeg"))
            let response = try await harness.get(harness.signedPlain("w:20", "/photo.jpg"))
            #expect(response.status == 200)
        }
        let spans = tracer.finishedSpans
        let names = Set(spans.map(\.operationName))
        #expect(names.isSuperset(of: ["GET", "result cache", "fetch", "process", "decode", "transform", "encode", "store"]), "\(names)")
        let server = try #require(spans.first { $0.kind == .server })
        #expect(spans.allSatisfy { $0.traceID == server.traceID }, "one trace")
        #expect(server.attributes["webimage.cache"]?.toSpanAttribute() == "processed")

        try await ServerHarness.with { harness in
            harness.origin.route("/photo.jpg", .ok(Array(try Fixture.data("gradient.jpg")), contentType: "image/jpeg"))
            #expect(try await harness.get(harness.signedPlain("w:20", "/photo.jpg")).status == 200)
            #expect(harness.origin.requests(to: "/photo.jpg").first?.header("traceparent") == nil, "no tracer: nothing sent")
        }
    }
}
