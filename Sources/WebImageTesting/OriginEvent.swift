/// Something that happened on the ``OriginServer``, in the order it happened.
public enum OriginEvent: Sendable {
    /// A connection was accepted.
    case connectionOpened(connectionID: Int)
    /// A whole request arrived.
    case requestReceived(OriginRequest)
    /// The response to a request was sent in full.
    case responseFinished(OriginRequest, status: Int, bodyBytes: Int64)
    /// A connection closed, from either side. `pendingRequest` is the request whose response was
    /// still being sent (a client that gave up part-way), or nil.
    case connectionClosed(connectionID: Int, pendingRequest: OriginRequest?)

    /// The request the event is about, if any.
    public var request: OriginRequest? {
        switch self {
        case .connectionOpened: nil
        case .requestReceived(let request), .responseFinished(let request, _, _): request
        case .connectionClosed(_, let pending): pending
        }
    }
}
