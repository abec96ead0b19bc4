import Foundation
import Testing
import WebImageCore
import WebImageS3
import WebImageTestSupport

/// The AWS SDKs' order for finding credentials, region and endpoint (the AWS SDKs and Tools
/// reference guide: "Standardized credential providers", "Shared config and credentials
/// files", "Service-specific endpoints"), with files in a folder of the test's own.
@Suite("AWS settings from the environment and the shared files")
struct AWSSettingsTests {
    /// A HOME with `.aws/credentials` and `.aws/config` as given, in `scratch` (removed with it).
    static func home(in scratch: TemporaryDirectory, credentials: String?, config: String?) throws -> String {
        let home = scratch.url.appendingPathComponent("aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        if let credentials { try credentials.write(to: home.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8) }
        if let config { try config.write(to: home.appendingPathComponent(".aws/config"), atomically: true, encoding: .utf8) }
        return home.path
    }

    static let credentialsFile = """
        # comment
        [default]
        aws_access_key_id = AKIDDEFAULT
        aws_secret_access_key = default-secret

        [work]
        aws_access_key_id=AKIDWORK
        aws_secret_access_key=work-secret
        aws_session_token=work-token
        """
    static let configFile = """
        [default]
        region = eu-west-1
        ; comment
        [profile work]
        region = ap-south-1
        endpoint_url = http://127.0.0.1:9000
        s3 =
          addressing_style = path
        [profile configonly]
        aws_access_key_id = AKIDCONFIG
        aws_secret_access_key = config-secret
        [profile assumed]
        role_arn = arn:aws:iam::123456789012:role/x
        source_profile = default
        [sso-session corp]
        sso_region = us-east-1
        """

    @Test("the environment's keys win over every file; AWS_REGION over AWS_DEFAULT_REGION over the profile")
    func environmentFirst() throws {
        let scratch = try TemporaryDirectory("aws")
        let home = try Self.home(in: scratch, credentials: Self.credentialsFile, config: Self.configFile)
        let settings = try AWSSettings.resolve(environment: [
            "HOME": home, "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "env-token",
            "AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "us-east-2",
        ])
        #expect(settings.credentials == S3Credentials(accessKeyID: "AKIDENV", secretAccessKey: "env-secret", sessionToken: "env-token"))
        #expect(settings.credentialSource == "environment")
        #expect(settings.region == "us-west-2")
        #expect(try AWSSettings.resolve(environment: ["HOME": home, "AWS_DEFAULT_REGION": "us-east-2"]).region == "us-east-2")
    }

    @Test("without keys in the environment: the profile's, from the credentials file, else the config file; its region and endpoint")
    func profiles() throws {
        let scratch = try TemporaryDirectory("aws")
        let home = try Self.home(in: scratch, credentials: Self.credentialsFile, config: Self.configFile)
        let fallback = try AWSSettings.resolve(environment: ["HOME": home])
        #expect(fallback.credentials?.accessKeyID == "AKIDDEFAULT")
        #expect(fallback.region == "eu-west-1")
        #expect(fallback.endpoint == nil)
        let work = try AWSSettings.resolve(environment: ["HOME": home, "AWS_PROFILE": "work"])
        #expect(work.credentials == S3Credentials(accessKeyID: "AKIDWORK", secretAccessKey: "work-secret", sessionToken: "work-token"))
        #expect(work.credentialSource == "credentials file profile work")
        #expect(work.region == "ap-south-1")
        #expect(work.endpoint == URL(string: "http://127.0.0.1:9000"))
        let configOnly = try AWSSettings.resolve(environment: ["HOME": home, "AWS_PROFILE": "configonly"])
        #expect(configOnly.credentials?.accessKeyID == "AKIDCONFIG")
        #expect(configOnly.credentialSource == "config file profile configonly")
    }

    @Test("AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL over the profile's; AWS_IGNORE_CONFIGURED_ENDPOINT_URLS drops them all")
    func endpoints() throws {
        let scratch = try TemporaryDirectory("aws")
        let home = try Self.home(in: scratch, credentials: nil, config: Self.configFile)
        var environment = [
            "HOME": home, "AWS_PROFILE": "work", "AWS_ENDPOINT_URL": "https://general.example",
            "AWS_ENDPOINT_URL_S3": "https://s3.example:8443",
        ]
        #expect(try AWSSettings.resolve(environment: environment).endpoint == URL(string: "https://s3.example:8443"))
        environment["AWS_ENDPOINT_URL_S3"] = nil
        #expect(try AWSSettings.resolve(environment: environment).endpoint == URL(string: "https://general.example"))
        environment["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true"
        #expect(try AWSSettings.resolve(environment: environment).endpoint == nil)
        #expect(throws: WebImageError(.invalidArgument)) {
            try AWSSettings.resolve(environment: ["HOME": home, "AWS_ENDPOINT_URL": "ftp://x"])
        }
    }

    @Test("AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name other files")
    func otherFiles() throws {
        let scratch = try TemporaryDirectory("aws")
        let home = try Self.home(in: scratch, credentials: nil, config: nil)
        let other = try Self.home(in: scratch, credentials: Self.credentialsFile, config: Self.configFile)
        let settings = try AWSSettings.resolve(environment: [
            "HOME": home, "AWS_SHARED_CREDENTIALS_FILE": "\(other)/.aws/credentials", "AWS_CONFIG_FILE": "\(other)/.aws/config",
        ])
        #expect(settings.credentials?.accessKeyID == "AKIDDEFAULT")
        #expect(settings.region == "eu-west-1")
    }

    @Test("refused with a reason: a profile no file has, half a key pair, role and web identity credentials this library lacks")
    func refusals() throws {
        let scratch = try TemporaryDirectory("aws")
        let home = try Self.home(in: scratch, credentials: Self.credentialsFile, config: Self.configFile)
        let cases: [[String: String]] = [
            ["HOME": home, "AWS_PROFILE": "missing"],
            ["HOME": home, "AWS_ACCESS_KEY_ID": "AKIDONLY"],
            ["HOME": home, "AWS_PROFILE": "assumed"],
            ["HOME": try Self.home(in: scratch, credentials: nil, config: nil), "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token"],
        ]
        for environment in cases {
            let error = #expect(throws: WebImageError.self) { try AWSSettings.resolve(environment: environment) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message?.isEmpty == false)
        }
        // Nothing anywhere: no credentials, requests go unsigned.
        let empty = try AWSSettings.resolve(environment: ["HOME": try Self.home(in: scratch, credentials: nil, config: nil)])
        #expect(empty == AWSSettings())
    }

    @Test("a configuration from the environment: path style for a configured endpoint, AWS's own otherwise; no secret in descriptions")
    func configuration() throws {
        let scratch = try TemporaryDirectory("aws")
        let home = try Self.home(in: scratch, credentials: nil, config: nil)
        let custom = try S3Configuration.fromEnvironment([
            "HOME": home, "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:8333", "AWS_ACCESS_KEY_ID": "AKID",
            "AWS_SECRET_ACCESS_KEY": "hidden-secret",
        ])
        #expect(custom.usesPathStyle && custom.region == "us-east-1")
        #expect(!"\(custom)".contains("hidden-secret"))
        let aws = try S3Configuration.fromEnvironment(["HOME": home, "AWS_REGION": "eu-central-1"])
        #expect(!aws.usesPathStyle && aws.endpoint == nil && aws.region == "eu-central-1" && aws.credentials == nil)
    }
}
