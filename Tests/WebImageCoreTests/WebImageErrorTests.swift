import Testing
import WebImageCore
import WebImageTestSupport

@Suite("WebImageError")
struct WebImageErrorTests {
    struct Underlying: Error, Equatable {}

    @Test("errors compare by code and keep the underlying error")
    func equality() {
        let error = WebImageError(.badStatus(404), "GET /x", underlying: Underlying())
        #expect(error == WebImageError(.badStatus(404)))
        #expect(error != WebImageError(.badStatus(500)))
        #expect(error.underlyingError as? Underlying == Underlying())
        #expect(error.description.contains("badStatus(404)"))
        #expect(error.description.contains("GET /x"))
    }

    @Test("transient errors are the ones a later retry can fix")
    func transient() {
        let transient: [WebImageError.Code] = [
            .cancelled, .timedOut, .cannotConnect, .connectionLost, .badStatus(503), .badStatus(500), .badStatus(429),
        ]
        let permanent: [WebImageError.Code] = [
            .badStatus(404), .badStatus(403), .badServerResponse, .notAnImage, .decodeFailed, .tooLarge, .invalidURL, .tooManyRedirects,
        ]
        for code in transient { #expect(WebImageError(code).isTransient, "\(code)") }
        for code in permanent { #expect(!WebImageError(code).isTransient, "\(code)") }
    }
}

@Suite("WebImageError.Code")
struct WebImageErrorCodeTests {
    @Test("codes match in a switch, keep their HTTP status and print their name")
    func switchingOverCodes() {
        func kind(_ code: WebImageError.Code) -> String {
            switch code {
            case .badStatus(404): "missing"
            case .notAnImage, .unsupportedFormat: "not decodable"
            default: code.httpStatus.map { "status \($0)" } ?? "other"
            }
        }
        #expect(kind(.badStatus(404)) == "missing")
        #expect(kind(.badStatus(503)) == "status 503")
        #expect(kind(.unsupportedFormat) == "not decodable")
        #expect(kind(.timedOut) == "other")
        #expect(WebImageError.Code.badStatus(404).httpStatus == 404 && WebImageError.Code.timedOut.httpStatus == nil)
        #expect(WebImageError.Code.badStatus(404) != .badStatus(500) && WebImageError.Code.cacheIO != .cacheMiss)
        #expect("\(WebImageError.Code.timedOut)" == "timedOut" && "\(WebImageError.Code.badStatus(410))" == "badStatus(410)")
    }
}
