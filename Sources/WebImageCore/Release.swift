/// The package's release, named where it is shown: the downloader's `User-Agent`, the image
/// proxy's `/status` and playground.
package enum WebImageRelease {
    /// The version.
    public static let version = "0.1"
}
