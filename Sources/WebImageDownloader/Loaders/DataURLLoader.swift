public import Foundation

/// Loads `data:` URLs (RFC 2397): `data:[<media type>][;base64],<data>`.
public struct DataURLLoader: ImageLoader {
    /// Creates the loader.
    public init() {}

    public func canLoad(_ url: URL) -> Bool {
        url.scheme?.lowercased() == "data"
    }

    /// Decodes the URL's data.
    public func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        try Self.decode(url).get()
    }

    static func decode(_ url: URL) -> Result<LoadedData, WebImageError> {
        let text = url.absoluteString
        guard let comma = text.firstIndex(of: ","), text.lowercased().hasPrefix("data:") else {
            return .failure(WebImageError(.invalidURL, "a data: URL needs a comma before its data"))
        }
        let header = text[text.index(text.startIndex, offsetBy: 5)..<comma]
        let payload = String(text[text.index(after: comma)...])
        let parameters = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let isBase64 = parameters.last?.lowercased() == "base64"
        let mediaType = parameters.first.flatMap { $0.contains("/") ? $0 : nil }
        let bytes: Data?
        if isBase64 {
            bytes = payload.removingPercentEncoding.flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }
        } else {
            bytes = payload.removingPercentEncoding.map { Data($0.utf8) }
        }
        guard let bytes else { return .failure(WebImageError(.invalidURL, "the data: URL's data does not decode")) }
        return .success(LoadedData(data: bytes, url: url, contentType: mediaType))
    }
}
