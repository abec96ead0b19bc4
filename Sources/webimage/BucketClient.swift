import Foundation
import WebImageS3

/// Runs `body` with an S3 client made from the AWS settings of `environment`, ended afterwards
/// however `body` ends. Settings that cannot be read fail as `what` and the reason.
func withS3Client<Value>(_ what: String, environment: [String: String], _ body: (S3Client) async throws -> Value) async throws -> Value {
    let client: S3Client
    do {
        client = S3Client(configuration: try S3Configuration.fromEnvironment(environment))
    } catch {
        throw CommandFailure("\(what): \(error)")
    }
    do {
        let value = try await body(client)
        try await client.shutdown()
        return value
    } catch {
        try? await client.shutdown()
        throw error
    }
}
