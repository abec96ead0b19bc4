import NIOHTTP1

/// The response the server will actually send for one request: the scripted ``OriginResponse``
/// after conditional requests, ranges, compression and framing have been applied.
struct ResponsePlan {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
    var delivery: OriginResponse.Delivery
    var headerDelay: Duration
    var keepAlive: Bool
    var sendsBody: Bool

    init(response: OriginResponse, request: OriginRequest) {
        status = response.status
        body = response.body
        delivery = response.delivery
        headerDelay = response.headerDelay
        headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        keepAlive = request.header("Connection")?.lowercased() != "close"
        sendsBody = request.method != "HEAD"
        addValidators(response)
        if isNotModified(response, request) {
            status = 304
            body = []
        } else {
            if response.gzip {
                body = Gzip.compress(body)
                headers.replaceOrAdd(name: "Content-Encoding", value: "gzip")
            }
            if response.acceptsRanges && status == 200 {
                applyRange(response, request)
            }
        }
        addFraming(response)
    }

    private mutating func addValidators(_ response: OriginResponse) {
        if let etag = response.etag { headers.replaceOrAdd(name: "ETag", value: etag) }
        if let lastModified = response.lastModified { headers.replaceOrAdd(name: "Last-Modified", value: lastModified) }
    }

    private func isNotModified(_ response: OriginResponse, _ request: OriginRequest) -> Bool {
        guard (200...299).contains(response.status) else { return false }
        if let etag = response.etag, let ifNoneMatch = request.header("If-None-Match") {
            let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingSpaces() }
            return tags.contains("*") || tags.contains(etag) || tags.contains("W/" + etag)
        }
        if let lastModified = response.lastModified, let since = request.header("If-Modified-Since") {
            return since == lastModified
        }
        return false
    }

    private mutating func applyRange(_ response: OriginResponse, _ request: OriginRequest) {
        headers.replaceOrAdd(name: "Accept-Ranges", value: "bytes")
        guard let rangeHeader = request.header("Range") else { return }
        if let ifRange = request.header("If-Range"), ifRange != response.etag, ifRange != response.lastModified {
            return
        }
        let total = body.count
        guard let range = ByteRange(header: rangeHeader, length: total) else {
            status = 416
            body = []
            headers.replaceOrAdd(name: "Content-Range", value: "bytes */\(total)")
            return
        }
        status = 206
        body = Array(body[range.lower...range.upper])
        headers.replaceOrAdd(name: "Content-Range", value: "bytes \(range.lower)-\(range.upper)/\(total)")
    }

    private mutating func addFraming(_ response: OriginResponse) {
        let bodyForbidden = status == 304 || status == 204 || (100...199).contains(status)
        if bodyForbidden {
            body = []
            return
        }
        switch delivery {
        case .generated(let byteCount, let declaresLength):
            if declaresLength { headers.replaceOrAdd(name: "Content-Length", value: String(byteCount)) }
        case .cutShort, .reset:
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            keepAlive = false
        default:
            if !response.chunked { headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
    }
}

/// One satisfiable `bytes=` range, resolved against the body length.
struct ByteRange: Equatable {
    let lower: Int
    let upper: Int

    /// Parses `bytes=a-b`, `bytes=a-` and `bytes=-n`; nil when unsatisfiable or not one range.
    init?(header: String, length: Int) {
        guard header.hasPrefix("bytes="), length > 0 else { return nil }
        let spec = header.dropFirst("bytes=".count)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingSpaces()
        let last = spec[spec.index(after: dash)...].trimmingSpaces()
        if first.isEmpty {
            guard let suffix = Int(last), suffix > 0 else { return nil }
            lower = max(0, length - suffix)
            upper = length - 1
        } else {
            guard let start = Int(first), start < length else { return nil }
            let end = last.isEmpty ? length - 1 : Int(last)
            guard let end, end >= start else { return nil }
            lower = start
            upper = min(end, length - 1)
        }
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
