import Foundation
import Testing
import WebImageTesting
import WebImageTestSupport

/// `webimage serve`'s flags and `WEBIMAGE_*` variables, checked before anything listens.
@Suite("serve command")
struct ServeCommandTests {
    @Test("without a key or --allow-unsigned, and with bad flags or variables, serve exits 2 and says why")
    func refusesToStart() async throws {
        let workspace = try CommandWorkspace()
        let cases: [([String], [String: String], String)] = [
            (["serve"], [:], "give a signing key"),
            (["serve", "--key", "abcd"], [:], "one --salt for each --key"),
            (["serve", "--key", "zz", "--salt", "00"], [:], "hex"),
            (["serve", "--allow-unsigned", "--preset", "thumb=rs:nope"], [:], "error in preset `thumb`: rs: unknown resizing type"),
            (["serve", "--allow-unsigned", "--bind", "localhost"], [:], "--bind: \"localhost\" is not HOST:PORT"),
            (["serve"], ["WEBIMAGE_ALLOW_UNSIGNED": "1", "WEBIMAGE_QUEUE": "many"], "WEBIMAGE_QUEUE: \"many\" is not a whole number"),
            (["serve"], ["WEBIMAGE_KEY": "736563726574"], "one --salt for each --key"),
            (["serve", "--allow-unsigned", "--allowed-sources", "ftp://a.test"], [:], "is not an http(s) URL prefix"),
            (
                ["serve"], ["WEBIMAGE_ALLOW_UNSIGNED": "1", "WEBIMAGE_RESULT_MEMORY_CACHE_SIZE": "-1"],
                "--result-memory-cache-size is 0 or more"
            ),
        ]
        for (arguments, environment, message) in cases {
            let run = try await workspace.run(arguments, environment: environment)
            #expect(run.status == 2, "\(arguments) \(environment)")
            #expect(run.standardError.contains(message), "\(arguments): \(run.standardError)")
        }
    }

    @Test("issue 57: s3:// and local:/// entries of --allowed-sources start the server, as docs/serve.md says")
    func allowedSourceKinds() async throws {
        let directory = try TemporaryDirectory("serve-sources")
        let server = try ChildProcess(
            ChildProcess.builtProduct("webimage"),
            [
                "serve", "--bind", "127.0.0.1:0", "--allow-unsigned", "--result-cache-dir", directory.path, "--local-filesystem-root",
                directory.path, "--allowed-sources", "https://cdn.test/,s3://bucket/public/,local:///images/", "--log-level", "error",
            ])
        let line = try await server.waitForLine { $0.hasPrefix("listening on ") || $0.contains("allowed") }
        #expect(line.hasPrefix("listening on "), "\(line)")
        server.terminate()
        #expect(try await server.waitForExit().status == 0)
    }
}
