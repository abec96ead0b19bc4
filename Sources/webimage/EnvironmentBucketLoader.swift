import Foundation
import WebImage
import WebImageCore
import WebImageGCS
import WebImageS3

/// A bucket's URLs for the commands (`s3://`, `gs://`), with the client made from the
/// environment at the first such URL: a command that never reads a bucket never reads the
/// settings, and settings that are wrong fail that scheme's URLs alone, with the reason.
final class EnvironmentBucketLoader: ImageLoader {
    /// A loader and how to end its client.
    typealias Made = (loader: any ImageLoader, shutdown: @Sendable () async throws -> Void)

    private let scheme: String
    private let make: @Sendable () throws(WebImageError) -> Made
    /// The loader once made, or why it could not be; a lock because loads start from any task.
    private let made = Locked<Result<Made, WebImageError>?>(nil)

    private init(scheme: String, make: @escaping @Sendable () throws(WebImageError) -> Made) {
        self.scheme = scheme
        self.make = make
    }

    /// `s3://` URLs, the client from the AWS settings (`S3Configuration.fromEnvironment`).
    static func s3(environment: [String: String] = ProcessInfo.processInfo.environment) -> EnvironmentBucketLoader {
        EnvironmentBucketLoader(scheme: "s3") { () throws(WebImageError) -> Made in
            let client = S3Client(configuration: try S3Configuration.fromEnvironment(environment))
            return (S3ImageLoader(client: client), { try await client.shutdown() })
        }
    }

    /// `gs://` URLs, the client from Google's settings (`GCSConfiguration.fromEnvironment`:
    /// `STORAGE_EMULATOR_HOST`, `GOOGLE_APPLICATION_CREDENTIALS`, the metadata server).
    static func gcs(environment: [String: String] = ProcessInfo.processInfo.environment) -> EnvironmentBucketLoader {
        EnvironmentBucketLoader(scheme: "gs") { () throws(WebImageError) -> Made in
            let client = GCSClient(configuration: try GCSConfiguration.fromEnvironment(environment: environment))
            return (GCSImageLoader(client: client), { try await client.shutdown() })
        }
    }

    func canLoad(_ url: URL) -> Bool {
        url.scheme?.lowercased() == scheme
    }

    func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        try await loader().get().loader.loadData(url, options: options, events: events)
    }

    private func loader() -> Result<Made, WebImageError> {
        made.withLock { made in
            if let made { return made }
            let result = Result { () throws(WebImageError) in try make() }
            made = result
            return result
        }
    }

    /// Ends the client, if one was made.
    func shutdown() async throws {
        if case .success(let made) = made.withLock({ $0 }) { try await made.shutdown() }
    }
}
