import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Reads one response on its event loop through AsyncHTTPClient's delegate API, so that the body's
/// pieces never hop to the task pool one by one: the head is judged the moment it arrives (a
/// refusal stops the transfer before its body), pieces are appended under the byte cap, and
/// `progress` hears about each piece. The finished body crosses to the caller once.
///
/// The pieces gather in a ``ReceivedBody``: a body in one piece is handed over without a copy,
/// and a longer one is copied once, into `Data` sized from the head's length.
final class BodyCollector: HTTPClientResponseDelegate {
    typealias Response = Data

    typealias Accepted = DownloadResponsePolicy.Accepted
    typealias Refused = DownloadResponsePolicy.Refused

    private struct State {
        var accepted: Accepted?
        var body = ReceivedBody()
        var refusal: Refused?
        /// The URL of the last response head, which after redirects is the one the body comes from.
        var visitedURL: URL?
    }

    private let state = Locked(State())
    private let maximumSize: Int
    private let judge: @Sendable (HTTPResponseHead) -> Result<Accepted, Refused>
    private let progress: @Sendable (_ received: Int, _ expected: Int64?, _ snapshot: () -> Data) -> Void

    init(
        maximumSize: Int,
        judge: @escaping @Sendable (HTTPResponseHead) -> Result<Accepted, Refused>,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int64?, _ snapshot: () -> Data) -> Void
    ) {
        self.maximumSize = maximumSize
        self.judge = judge
        self.progress = progress
    }

    /// The head the judge accepted, if it did.
    var accepted: Accepted? { state.withLock { $0.accepted } }
    /// Why the judge refused the head, if it did.
    var refusal: Refused? { state.withLock { $0.refusal } }
    /// The URL the response came from, after any redirects; nil before a head arrived.
    var finalURL: URL? { state.withLock { $0.visitedURL } }
    /// Everything received so far, the resumed prefix included.
    var receivedSoFar: Data { state.withLock { $0.body.data } }

    func didVisitURL(task: HTTPClient.Task<Data>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        state.withLock { $0.visitedURL = request.url }
    }

    func didReceiveHead(task: HTTPClient.Task<Data>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        switch judge(head) {
        case .failure(let refused):
            state.withLock { $0.refusal = refused }
            return task.eventLoop.makeFailedFuture(refused.error)
        case .success(let accepted):
            let received = state.withLock { state in
                state.accepted = accepted
                state.body = ReceivedBody(prefix: accepted.prefix, expectedSize: accepted.expected.map { Int(min($0, Int64(maximumSize))) })
                return state.body.count
            }
            progress(received, accepted.expected) { accepted.prefix }
            return task.eventLoop.makeSucceededVoidFuture()
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Data>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let received: Int? = state.withLock { state in
            guard state.body.count + buffer.readableBytes <= maximumSize else { return nil }
            state.body.append(buffer)
            return state.body.count
        }
        guard let received else {
            return task.eventLoop.makeFailedFuture(WebImageError(.tooLarge, "the body went past \(maximumSize) bytes"))
        }
        progress(received, accepted?.expected) { self.receivedSoFar }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Data>) throws -> Data {
        // Handed over, not kept: a body shared with its receive buffer holds that buffer until
        // the last reference goes, and the event loop reuses a free one for its next read
        // instead of allocating (and faulting in) a new one.
        state.withLock { state in
            defer { state.body = ReceivedBody() }
            return state.body.data
        }
    }
}
