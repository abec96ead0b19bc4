/// The package's release, named where it is shown: the downloader's `User-Agent`, the image
/// proxy's `/status` and playground, `webimage --version`, the wheel's `webimage.__version__`
/// and the .deb's version (both read from this line when they are built).
///
/// Semantic versioning; while it is 0.x, a minor version may change the public API and says so
/// in CHANGELOG.md, whose first entry is this version; a patch version never does.
package enum WebImageRelease {
    /// The version.
    public static let version = "0.4.3"
}
