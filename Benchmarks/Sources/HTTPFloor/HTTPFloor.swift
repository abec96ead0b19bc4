import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore

/// The floor of a result-cache hit: Hummingbird alone, configured as `webimage serve` configures
/// it (HTTP/1.1, its idle timeout and header limits), answering every request with one file's
/// bytes already in memory and the headers a hit carries. No parsing, no signature, no cache
/// lookup: whatever `webimage serve` spends beyond this is its own.
///
/// Usage: HTTPFloor FILE PORT
@main
struct HTTPFloor {
    struct FixedResponder: HTTPResponder {
        typealias Context = BasicRequestContext
        let body: ByteBuffer

        func respond(to request: Request, context: Context) async throws -> Response {
            var headers = HTTPFields()
            headers[.contentType] = "image/jpeg"
            headers[.eTag] = "\"floor\""
            headers[.cacheControl] = "public, max-age=31536000"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
        }
    }

    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let port = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: HTTPFloor FILE PORT\n".utf8))
            exit(2)
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: arguments[1]))
        let http = HTTP1Channel.Configuration(
            idleTimeout: .seconds(60), httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 16 * 1024))
        let application = Application(
            responder: FixedResponder(body: ByteBuffer(bytes: bytes)),
            server: .http1(configuration: http),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "floor"))
        try await application.runService()
    }
}
