import Foundation
import WebImage
import WebImageCore
import WebImageS3

/// `s3://` URLs for the commands, with the S3 client made from the AWS settings
/// (`S3Configuration.fromEnvironment`) at the first `s3://` URL: a command that never reads a
/// bucket never reads them, and settings that are wrong fail the `s3://` URLs alone, with the
/// reason.
final class EnvironmentS3Loader: ImageLoader {
    private let environment: [String: String]
    /// The loader once made, or why it could not be; a lock because loads start from any task.
    private let made = Locked<Result<S3ImageLoader, WebImageError>?>(nil)

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    func canLoad(_ url: URL) -> Bool {
        url.scheme?.lowercased() == "s3"
    }

    func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        try await loader().get().loadData(url, options: options, events: events)
    }

    private func loader() -> Result<S3ImageLoader, WebImageError> {
        made.withLock { made in
            if let made { return made }
            let result = Result { () throws(WebImageError) in
                S3ImageLoader(client: S3Client(configuration: try S3Configuration.fromEnvironment(environment)))
            }
            made = result
            return result
        }
    }

    /// Ends the client, if one was made.
    func shutdown() async throws {
        if case .success(let loader) = made.withLock({ $0 }) { try await loader.client.shutdown() }
    }
}
