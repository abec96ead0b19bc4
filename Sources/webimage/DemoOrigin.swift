import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import WebImage

/// The origin `webimage demo` loads from: an HTTP/1.1 server on 127.0.0.1 that serves a few
/// images from memory, each after an optional delay and optionally in timed pieces, and counts
/// the requests per path. The command ships this instead of the test kit (`WebImageTesting`), so
/// the release binary holds no test server and no key material.
final class DemoOrigin: Sendable {
    struct Route: Sendable {
        var body: [UInt8]
        var contentType: String
        /// How long the server waits before it answers.
        var headerDelay: Duration = .zero
        /// Send the body in pieces of this many bytes, one each `interval`; nil sends it whole.
        var drip: (bytes: Int, interval: Duration)?
    }

    private struct State {
        var routes: [String: Route] = [:]
        var requests: [String: Int] = [:]
    }

    private let state = Locked(State())
    private let listener: Locked<(any Channel)?> = Locked(nil)

    /// Starts the server on 127.0.0.1 with a port the system picks.
    static func start() async throws -> DemoOrigin {
        let origin = DemoOrigin()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(Handler(origin: origin))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        origin.listener.withLock { $0 = channel }
        return origin
    }

    var baseURL: String { "http://127.0.0.1:\(listener.withLock { $0?.localAddress?.port } ?? 0)" }

    func url(_ path: String) -> URL { URL(string: baseURL + path)! }

    func route(_ path: String, _ route: Route) {
        state.withLock { $0.routes[path] = route }
    }

    func requestCount(_ path: String) -> Int {
        state.withLock { $0.requests[path] ?? 0 }
    }

    var totalRequests: Int {
        state.withLock { $0.requests.values.reduce(0, +) }
    }

    func shutdown() async throws {
        try await listener.withLock { $0 }?.close()
    }

    private func request(_ path: String) -> Route? {
        state.withLock { state in
            state.requests[path, default: 0] += 1
            return state.routes[path]
        }
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let origin: DemoOrigin
        private var path = ""

        init(origin: DemoOrigin) {
            self.origin = origin
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): path = String(head.uri.prefix { $0 != "?" })
            case .body: break
            case .end: respond(context: context, route: origin.request(path))
            }
        }

        private func respond(context: ChannelHandlerContext, route: Route?) {
            guard let route else {
                send(context: context, status: .notFound, contentType: "text/plain", body: Array("not found\n".utf8), drip: nil)
                return
            }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .nanoseconds(Int64(route.headerDelay.nanoseconds))) {
                let (handler, context) = loopBound.value
                handler.send(context: context, status: .ok, contentType: route.contentType, body: route.body, drip: route.drip)
            }
        }

        private func send(
            context: ChannelHandlerContext, status: HTTPResponseStatus, contentType: String, body: [UInt8],
            drip: (bytes: Int, interval: Duration)?
        ) {
            let headers: HTTPHeaders = ["Content-Type": contentType, "Content-Length": "\(body.count)"]
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            sendBody(context: context, body[...], drip: drip)
        }

        private func sendBody(context: ChannelHandlerContext, _ rest: ArraySlice<UInt8>, drip: (bytes: Int, interval: Duration)?) {
            let piece = rest.prefix(drip?.bytes ?? rest.count)
            if !piece.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: piece)))), promise: nil)
            }
            let remaining = rest.dropFirst(piece.count)
            guard let drip, !remaining.isEmpty else {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            context.flush()
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .nanoseconds(Int64(drip.interval.nanoseconds))) {
                let (handler, context) = loopBound.value
                handler.sendBody(context: context, remaining, drip: drip)
            }
        }
    }
}

extension Duration {
    /// The whole duration in nanoseconds.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
