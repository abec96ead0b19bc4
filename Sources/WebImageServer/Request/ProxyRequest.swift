import Foundation
import WebImage

/// A processing request once read (``RequestReader``): its path parsed and its signature
/// checked, its options read, its source judged, and what its answer depends on worked out.
/// Nothing in it has been fetched; every later stage takes it as it is.
struct ProxyRequest: Sendable {
    /// The URL to fetch, as the allow-list normalised it.
    var source: URL
    var options: ProcessingOptions
    /// The rule the result's format follows.
    var choice: OutputFormatRule
    /// The result's key in every tier: the source, the canonical options and the format rule
    /// (no signature, so rotating keys keeps the caches).
    var key: String
    /// The request headers the answer depends on (`Vary`); empty when none.
    var vary: [String]
    /// The conditional headers, as far as the server answers them.
    var conditions: Conditions
}
