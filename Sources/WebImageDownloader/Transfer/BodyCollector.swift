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
        var redirect: Redirect?
        var challenged = false
        /// The last response head's status, for the request's span.
        var statusCode: Int?
    }

    /// A redirect response: where it leads and its head. Its body is read and dropped, so that
    /// the connection stays open for the next request.
    struct Redirect {
        let target: URL
        let head: DownloadResponseHead
    }

    private let state = Locked(State())
    /// The URL requested, against which a redirect's `Location` is resolved.
    private let url: URL
    /// The `Authorization` value that answers a `401` with a Basic challenge (the configured
    /// credentials, ``ImageDownloaderConfiguration/username``); nil when such a `401` is judged
    /// as a failure.
    private let challengeAnswer: String?
    private let maximumSize: Int
    private let judge: @Sendable (HTTPResponseHead) -> Result<Accepted, Refused>
    private let progress: @Sendable (_ received: Int, _ expected: Int64?, _ snapshot: () -> Data) -> Void

    init(
        url: URL,
        challengeAnswer: String? = nil,
        maximumSize: Int,
        judge: @escaping @Sendable (HTTPResponseHead) -> Result<Accepted, Refused>,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int64?, _ snapshot: () -> Data) -> Void
    ) {
        self.url = url
        self.challengeAnswer = challengeAnswer
        self.maximumSize = maximumSize
        self.judge = judge
        self.progress = progress
    }

    /// The head the judge accepted, if it did.
    var accepted: Accepted? { state.withLock { $0.accepted } }
    /// Why the judge refused the head, if it did.
    var refusal: Refused? { state.withLock { $0.refusal } }
    /// The redirect the response was, if it was one.
    var redirect: Redirect? { state.withLock { $0.redirect } }
    /// The `Authorization` value to send the request again with, when the response was a Basic
    /// challenge to answer.
    var answerToChallenge: String? { state.withLock { $0.challenged } ? challengeAnswer : nil }
    /// The status of the response head received, if one was.
    var statusCode: Int? { state.withLock { $0.statusCode } }
    /// Everything received so far, the resumed prefix included.
    var receivedSoFar: Data { state.withLock { $0.body.data } }

    func didReceiveHead(task: HTTPClient.Task<Data>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let status = Int(head.status.code)
        state.withLock { $0.statusCode = status }
        if RedirectRule.statuses.contains(status),
            let target = RedirectRule.target(status: status, location: head.headers.first(name: "Location"), from: url)
        {
            let redirect = Redirect(
                target: target, head: DownloadResponseHead(statusCode: status, headers: head.headers.map { ($0.name, $0.value) }))
            state.withLock { $0.redirect = redirect }
            return task.eventLoop.makeSucceededVoidFuture()
        }
        if challengeAnswer != nil, status == 401, head.headers[canonicalForm: "WWW-Authenticate"].contains(where: BasicChallenge.isBasic) {
            state.withLock { $0.challenged = true }
            return task.eventLoop.makeSucceededVoidFuture()
        }
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
        enum Outcome {
            case appended(total: Int)
            case overCap, dropped
        }
        let outcome = state.withLock { state -> Outcome in
            // A redirect's or a challenge's body is dropped.
            if state.redirect != nil || state.challenged { return .dropped }
            guard state.body.count + buffer.readableBytes <= maximumSize else { return .overCap }
            state.body.append(buffer)
            return .appended(total: state.body.count)
        }
        guard case .appended(let received) = outcome else {
            if case .dropped = outcome { return task.eventLoop.makeSucceededVoidFuture() }
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

/// HTTP Basic authentication (RFC 7617) as the downloader answers it.
enum BasicChallenge {
    /// Whether a `WWW-Authenticate` value offers the Basic scheme.
    static func isBasic(_ value: Substring) -> Bool {
        value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("basic") }
    }

    /// The `Authorization` value for `username` and `password`.
    static func authorization(username: String, password: String) -> String {
        "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
    }
}
