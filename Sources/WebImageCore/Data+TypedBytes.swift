import Foundation

extension Data {
    /// Runs `body` over the bytes, keeping its typed error (`withUnsafeBytes` only rethrows
    /// untyped errors).
    package func withTypedBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(WebImageError) -> Result) throws(WebImageError) -> Result {
        let outcome = withUnsafeBytes { bytes in
            Swift.Result { () throws(WebImageError) in try body(bytes) }
        }
        return try outcome.get()
    }
}
