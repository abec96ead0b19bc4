import Foundation
import WebImageGCS
import WebImageS3

/// Runs `body` with an S3 client made from the AWS settings of `environment`, ended afterwards
/// however `body` ends. Settings that cannot be read fail as `what` and the reason.
func withS3Client<Value>(_ what: String, environment: [String: String], _ body: (S3Client) async throws -> Value) async throws -> Value {
    try await withClient(
        what, make: { S3Client(configuration: try S3Configuration.fromEnvironment(environment)) }, shutdown: { try await $0.shutdown() },
        body)
}

/// Runs `body` with a Cloud Storage client made from Google's settings of `environment`
/// (`GOOGLE_APPLICATION_CREDENTIALS`, the metadata server, `STORAGE_EMULATOR_HOST`), ended
/// afterwards however `body` ends. Settings that cannot be read fail as `what` and the reason.
func withGCSClient<Value>(_ what: String, environment: [String: String], _ body: (GCSClient) async throws -> Value) async throws -> Value {
    try await withClient(
        what, make: { GCSClient(configuration: try GCSConfiguration.fromEnvironment(environment: environment)) },
        shutdown: { try await $0.shutdown() },
        body)
}

private func withClient<Client, Value>(
    _ what: String, make: () throws -> Client, shutdown: (Client) async throws -> Void, _ body: (Client) async throws -> Value
) async throws -> Value {
    let client: Client
    do {
        client = try make()
    } catch {
        throw CommandFailure("\(what): \(error)")
    }
    do {
        let value = try await body(client)
        try await shutdown(client)
        return value
    } catch {
        try? await shutdown(client)
        throw error
    }
}
