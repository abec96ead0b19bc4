public import Foundation

/// Loads `file:` URLs from the local file system, up to a byte cap.
public struct FileURLLoader: ImageLoader {
    /// The largest file read. Default 50 MiB, like the downloader.
    public var maximumSize: Int

    /// Creates the loader.
    public init(maximumSize: Int = 50 * 1024 * 1024) {
        self.maximumSize = maximumSize
    }

    public func canLoad(_ url: URL) -> Bool {
        url.isFileURL
    }

    /// Reads the file (on the calling task: a local read, bounded by ``maximumSize``).
    public func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        try Task.checkCancellation(as: WebImageError.self)
        guard let info = FileSystem.fileInfo(url.path) else {
            throw WebImageError(.invalidURL, "no file at \(url.path)")
        }
        guard info.size <= maximumSize else {
            throw WebImageError(.tooLarge, "\(url.path) is \(info.size) bytes, over \(maximumSize)")
        }
        guard let bytes = try FileSystem.contents(of: url.path) else {
            throw WebImageError(.invalidURL, "no file at \(url.path)")
        }
        return LoadedData(data: Data(bytes), url: url, contentType: ImageFormat(sniffing: bytes)?.mimeType)
    }
}
