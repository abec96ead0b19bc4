import NIOCore
import NIOHTTP1

/// How a client connection ends when the server drains, so that a request the client sends on a
/// kept-alive connection never crosses the server's close. Closing an idle connection at once (what
/// Hummingbird does on its own) races the client: a proxy such as nginx may already be writing its
/// next request into that connection, and gets a reset for a request the node never saw, which it
/// cannot safely send again elsewhere. Closing a connection right after a response that did not say
/// `Connection: close` races the same way.
///
/// So once draining, every response says `Connection: close` and its connection closes once it
/// is written; a connection that is idle stays open for a grace period, so that a request sent on
/// it meanwhile is answered (and closes it), and only a connection that stays quiet that long is
/// closed. The decisions are this value's; ``ConnectionDrainHandler`` carries them out.
struct ConnectionDrain: Equatable {
    enum Action: Equatable {
        case none
        /// Idle while draining: close after the grace period unless a request arrives first.
        case startGrace
        /// A request arrived during the grace period: it is answered rather than closed under.
        case cancelGrace
        /// The response just finished announced the close: close once it is written.
        case closeAfterWrite
    }

    /// Requests whose head was read and whose response has not ended.
    private(set) var requestsOpen = 0
    private(set) var draining = false
    /// Whether a response said `Connection: close`, so the connection ends with it.
    private(set) var closeAnnounced = false

    mutating func requestHead() -> Action {
        requestsOpen += 1
        return draining && requestsOpen == 1 && !closeAnnounced ? .cancelGrace : .none
    }

    mutating func quiesce() -> Action {
        guard !draining else { return .none }
        draining = true
        return requestsOpen == 0 ? .startGrace : .none
    }

    /// Whether the final response head now going out must say `Connection: close`.
    mutating func responseHead() -> Bool {
        guard draining else { return false }
        closeAnnounced = true
        return true
    }

    mutating func responseEnd() -> Action {
        requestsOpen = max(0, requestsOpen - 1)
        if closeAnnounced { return .closeAfterWrite }
        // The response went out before the drain began, without a close: the connection is idle
        // and kept-alive in the client's eyes, so it gets the same grace as any idle one.
        return draining && requestsOpen == 0 ? .startGrace : .none
    }
}

/// Carries out ``ConnectionDrain`` on one connection, after the HTTP decoder. It takes the server's
/// `ChannelShouldQuiesceEvent` for itself (Hummingbird's own handling would close idle connections
/// at once) and closes the connection when the drain allows.
final class ConnectionDrainHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long an idle connection stays open once the server drains.
    let grace: TimeAmount
    private var state = ConnectionDrain()
    private var graceTimer: Scheduled<Void>?

    init(grace: TimeAmount) { self.grace = grace }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { perform(state.requestHead(), context) }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        perform(state.quiesce(), context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200 && state.responseHead():
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            let action = state.responseEnd()
            guard action == .closeAfterWrite else {
                context.write(data, promise: promise)
                return perform(action, context)
            }
            let written = promise ?? context.eventLoop.makePromise()
            let channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            context.write(data, promise: written)
        case .head, .body:
            context.write(data, promise: promise)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        graceTimer?.cancel()
        graceTimer = nil
        context.fireChannelInactive()
    }

    private func perform(_ action: ConnectionDrain.Action, _ context: ChannelHandlerContext) {
        switch action {
        case .none, .closeAfterWrite:
            break
        case .startGrace:
            let channel = context.channel
            graceTimer = context.eventLoop.scheduleTask(in: grace) { channel.close(promise: nil) }
        case .cancelGrace:
            graceTimer?.cancel()
            graceTimer = nil
        }
    }
}
