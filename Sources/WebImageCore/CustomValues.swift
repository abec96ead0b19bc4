/// A key for an application's own value riding along with a load, to its options processor,
/// loaders and coders: the key is a type, the value of its `Value` type.
///
/// ```swift
/// enum Tenant: LoadContextKey { typealias Value = String }
/// context[Tenant.self] = "acme"                // in the load's LoadContext
/// options.values[Tenant.self]                  // in a loader (LoadRequestOptions) or coder (DecodeOptions)
/// ```
public protocol LoadContextKey {
    /// The value's type.
    associatedtype Value: Sendable
}

/// An application's own values for one load, keyed by ``LoadContextKey`` types.
///
/// Values are not compared: two sets are equal only when one is an unchanged copy of the other
/// (each assignment gives the set a new identity). Loads whose values were set apart therefore
/// never share a download or a decode, while copies of one context do.
public struct CustomValues: Sendable, Hashable {
    private var storage: [ObjectIdentifier: any Sendable] = [:]
    /// Identifies this set of assignments; 0 for the empty set.
    private var identity: UInt64 = 0

    /// An empty set.
    public init() {}

    /// The value for `key`, if one was set.
    public subscript<Key: LoadContextKey>(_ key: Key.Type) -> Key.Value? {
        get { storage[ObjectIdentifier(key)] as? Key.Value }
        set {
            storage[ObjectIdentifier(key)] = newValue
            identity = storage.isEmpty ? 0 : UInt64.random(in: 1...UInt64.max)
        }
    }

    /// Whether no value is set.
    public var isEmpty: Bool { storage.isEmpty }

    public static func == (lhs: CustomValues, rhs: CustomValues) -> Bool {
        lhs.identity == rhs.identity
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identity)
    }
}
