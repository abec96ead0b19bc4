import Foundation

/// Something that carries HTTP headers in order and looks them up without regard to case.
public protocol HTTPHeaderLookup {
    /// The headers, in order.
    var headers: [(name: String, value: String)] { get }
}

extension HTTPHeaderLookup {
    /// The first value of a header, matched without regard to case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }
}
