public import Foundation

/// Rewrites the options and context of every load a manager starts (SDWebImage's
/// `SDWebImageOptionsProcessor`), for example to add `.retryFailed` to every URL of one host.
public struct OptionsProcessor: Sendable {
    /// The processor: the URL, the options and context the caller gave; returns the ones to use.
    public let process: @Sendable (URL, LoadOptions, LoadContext) -> (LoadOptions, LoadContext)

    /// Wraps a closure.
    public init(_ process: @escaping @Sendable (URL, LoadOptions, LoadContext) -> (LoadOptions, LoadContext)) {
        self.process = process
    }
}
