/// Protocol Buffers' binary wire format, as much of it as reading an OTLP
/// `ExportTraceServiceRequest` needs (https://protobuf.dev/programming-guides/encoding/): each
/// field a key (field number and wire type) and its value. Field numbers are those of
/// opentelemetry-proto's `trace/v1/trace.proto`, `common/v1/common.proto` and
/// `resource/v1/resource.proto`.
struct OTLPWire {
    struct Malformed: Error {}

    /// One field: its number and, for a length-delimited field, its bytes; for a varint or a
    /// fixed one, its value.
    struct Field {
        var number: Int
        var bytes: ArraySlice<UInt8>
        var integer: UInt64
    }

    /// The fields of one message, in order.
    static func fields(_ message: ArraySlice<UInt8>) throws(Malformed) -> [Field] {
        var fields: [Field] = []
        var index = message.startIndex
        while index < message.endIndex {
            let key = try varint(message, &index)
            let number = Int(key >> 3)
            switch key & 7 {
            case 0:
                fields.append(Field(number: number, bytes: [], integer: try varint(message, &index)))
            case 1, 5:
                let width = key & 7 == 1 ? 8 : 4
                guard message.endIndex - index >= width else { throw Malformed() }
                let value = message[index..<index + width].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                fields.append(Field(number: number, bytes: [], integer: value))
                index += width
            case 2:
                let length = Int(try varint(message, &index))
                guard length >= 0, message.endIndex - index >= length else { throw Malformed() }
                fields.append(Field(number: number, bytes: message[index..<index + length], integer: 0))
                index += length
            default:
                throw Malformed()
            }
        }
        return fields
    }

    private static func varint(_ bytes: ArraySlice<UInt8>, _ index: inout Int) throws(Malformed) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard index < bytes.endIndex else { throw Malformed() }
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        throw Malformed()
    }

    /// The spans of an `ExportTraceServiceRequest`: resource_spans (1) → resource (1) and
    /// scope_spans (2) → spans (2).
    static func spans(in request: [UInt8]) throws(Malformed) -> [TraceReceiver.Span] {
        var spans: [TraceReceiver.Span] = []
        for resourceSpans in try fields(request[...]) where resourceSpans.number == 1 {
            let parts = try fields(resourceSpans.bytes)
            var resource: [String: String] = [:]
            for part in parts where part.number == 1 {
                for attribute in try fields(part.bytes) where attribute.number == 1 {
                    let (key, value) = try keyValue(attribute.bytes)
                    resource[key] = value
                }
            }
            for scopeSpans in parts where scopeSpans.number == 2 {
                for span in try fields(scopeSpans.bytes) where span.number == 2 {
                    spans.append(try self.span(span.bytes, serviceName: resource["service.name"]))
                }
            }
        }
        return spans
    }

    /// `Span`: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9.
    private static func span(_ bytes: ArraySlice<UInt8>, serviceName: String?) throws(Malformed) -> TraceReceiver.Span {
        var traceID = ""
        var spanID = ""
        var parentSpanID = ""
        var name = ""
        var kind = 0
        var attributes: [String: String] = [:]
        for field in try fields(bytes) {
            switch field.number {
            case 1: traceID = hex(field.bytes)
            case 2: spanID = hex(field.bytes)
            case 4: parentSpanID = hex(field.bytes)
            case 5: name = String(decoding: field.bytes, as: UTF8.self)
            case 6: kind = Int(field.integer)
            case 9:
                let (key, value) = try keyValue(field.bytes)
                attributes[key] = value
            default: continue
            }
        }
        return TraceReceiver.Span(
            traceID: traceID, spanID: spanID, parentSpanID: parentSpanID, name: name, kind: kind, attributes: attributes,
            serviceName: serviceName)
    }

    /// `KeyValue` (key 1, value 2) with its `AnyValue` as text: string 1, bool 2, int 3, double 4.
    private static func keyValue(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> (String, String) {
        var key = ""
        var value = ""
        for field in try fields(bytes) {
            if field.number == 1 { key = String(decoding: field.bytes, as: UTF8.self) }
            guard field.number == 2, let any = try fields(field.bytes).last else { continue }
            switch any.number {
            case 1: value = String(decoding: any.bytes, as: UTF8.self)
            case 2: value = any.integer != 0 ? "true" : "false"
            case 3: value = String(Int64(bitPattern: any.integer))
            case 4: value = String(Double(bitPattern: any.integer))
            default: value = hex(any.bytes)
            }
        }
        return (key, value)
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
