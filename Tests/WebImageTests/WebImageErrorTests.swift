import Testing
import WebImage

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
        let transient: [WebImageError.Code] = [.cancelled, .timedOut, .cannotConnect, .connectionLost, .badStatus(503), .badStatus(500), .badStatus(429)]
        let permanent: [WebImageError.Code] = [.badStatus(404), .badStatus(403), .badServerResponse, .notAnImage, .decodeFailed, .tooLarge, .invalidURL, .tooManyRedirects]
        for code in transient { #expect(WebImageError(code).isTransient, "\(code)") }
        for code in permanent { #expect(!WebImageError(code).isTransient, "\(code)") }
    }
}
