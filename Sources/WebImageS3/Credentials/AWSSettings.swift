public import Foundation
public import WebImageCore

/// The credentials, region and endpoint an AWS SDK would find in this process's environment
/// and the shared files, in the SDKs' order:
///
/// - credentials: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), else the
///   profile (`AWS_PROFILE`, else `default`) in the credentials file
///   (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`), else in the config file
///   (`AWS_CONFIG_FILE`, else `~/.aws/config`, whose sections are `[profile NAME]` and `[default]`);
/// - region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the profile's `region`;
/// - endpoint: `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`, else the profile's
///   `endpoint_url`, none of them when `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is true.
///
/// Not supported, and refused with a message rather than skipped: web identity
/// (`AWS_WEB_IDENTITY_TOKEN_FILE`), `role_arn`, `credential_process` and `sso_*` profiles, and
/// container credentials. The instance metadata service is never asked. With no credentials
/// anywhere, ``credentials`` is nil and requests go unsigned (a public bucket).
public struct AWSSettings: Sendable, Equatable {
    /// The credentials found, or nil.
    public var credentials: S3Credentials?
    /// The region found, or nil (the client then uses `us-east-1`).
    public var region: String?
    /// The endpoint found, or nil (the client then uses AWS's for the region).
    public var endpoint: URL?
    /// Where the credentials came from (`environment`, `credentials file profile default`), for logs.
    public var credentialSource: String?

    /// Creates settings.
    public init(credentials: S3Credentials? = nil, region: String? = nil, endpoint: URL? = nil, credentialSource: String? = nil) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
        self.credentialSource = credentialSource
    }

    /// Resolves the settings from `environment` (this process's by default) and the files it
    /// points to.
    ///
    /// - Throws: `WebImageError.Code.invalidArgument` when `AWS_PROFILE` names a profile neither
    ///   file has, a file cannot be read, only one of the key id and secret is set, the
    ///   endpoint is not an http(s) URL, or the credentials need a method this library lacks.
    public static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws(WebImageError) -> AWSSettings {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let profileName = nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        let credentialsFile = try AWSProfileFile.load(
            nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) ?? "\(home)/.aws/credentials", kind: .credentials)
        let configFile = try AWSProfileFile.load(nonEmpty(environment["AWS_CONFIG_FILE"]) ?? "\(home)/.aws/config", kind: .config)
        let fromCredentials = credentialsFile?.profiles[profileName]
        let fromConfig = configFile?.profiles[profileName]
        if nonEmpty(environment["AWS_PROFILE"]) != nil, fromCredentials == nil, fromConfig == nil {
            throw WebImageError(.invalidArgument, "AWS_PROFILE names the profile \(profileName), which neither AWS file has")
        }
        var settings = AWSSettings()
        if let keys = try keys(
            environment["AWS_ACCESS_KEY_ID"], environment["AWS_SECRET_ACCESS_KEY"], environment["AWS_SESSION_TOKEN"], "the environment")
        {
            (settings.credentials, settings.credentialSource) = (keys, "environment")
        } else if let profile = fromCredentials, let keys = try profileKeys(profile, "credentials file profile \(profileName)") {
            (settings.credentials, settings.credentialSource) = (keys, "credentials file profile \(profileName)")
        } else if let profile = fromConfig, let keys = try profileKeys(profile, "config file profile \(profileName)") {
            (settings.credentials, settings.credentialSource) = (keys, "config file profile \(profileName)")
        } else {
            try refuseUnsupported(environment: environment, profile: fromConfig ?? fromCredentials, name: profileName)
        }
        settings.region =
            nonEmpty(environment["AWS_REGION"]) ?? nonEmpty(environment["AWS_DEFAULT_REGION"]) ?? nonEmpty(fromConfig?["region"])
        if environment["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"]?.lowercased() != "true",
            let endpoint = nonEmpty(environment["AWS_ENDPOINT_URL_S3"]) ?? nonEmpty(environment["AWS_ENDPOINT_URL"])
                ?? nonEmpty(fromConfig?["endpoint_url"])
        {
            settings.endpoint = try S3Configuration.endpointURL(endpoint)
        }
        return settings
    }

    private static func keys(_ id: String?, _ secret: String?, _ token: String?, _ place: String) throws(WebImageError) -> S3Credentials? {
        switch (nonEmpty(id), nonEmpty(secret)) {
        case (let id?, let secret?): S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: nonEmpty(token))
        case (nil, nil): nil
        default: throw WebImageError(.invalidArgument, "\(place) sets only one of the access key id and the secret access key")
        }
    }

    private static func profileKeys(_ profile: [String: String], _ place: String) throws(WebImageError) -> S3Credentials? {
        try keys(profile["aws_access_key_id"], profile["aws_secret_access_key"], profile["aws_session_token"], place)
    }

    /// No keys were found: a method of getting them that this library lacks is an error, so
    /// that a deployment relying on it fails at start rather than sending unsigned requests.
    private static func refuseUnsupported(environment: [String: String], profile: [String: String]?, name: String) throws(WebImageError) {
        let unsupported =
            [
                nonEmpty(environment["AWS_WEB_IDENTITY_TOKEN_FILE"]).map { _ in "web identity (AWS_WEB_IDENTITY_TOKEN_FILE)" },
                (nonEmpty(environment["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"])
                    ?? nonEmpty(environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"]))
                    .map { _ in "container credentials (AWS_CONTAINER_CREDENTIALS_*)" },
            ]
            + ["role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file"].map { key in
                profile?[key].map { _ in "\(key) in profile \(name)" }
            }
        if let first = unsupported.compactMap({ $0 }).first {
            throw WebImageError(.invalidArgument, "AWS credentials from \(first) are not supported; set access keys instead")
        }
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }
}

/// One of the AWS shared files (`~/.aws/credentials`, `~/.aws/config`), read as the SDKs read
/// them: `[section]` lines, `key = value` lines, `#` and `;` comment lines; in the config
/// file a profile's section is `[profile NAME]` (`[default]` alone keeps its name). Indented
/// lines belong to a nested setting (`s3 =` followed by its own keys) and are skipped.
struct AWSProfileFile {
    enum Kind {
        case credentials, config
    }

    var profiles: [String: [String: String]] = [:]

    /// The file at `path`, or nil when there is none.
    static func load(_ path: String, kind: Kind) throws(WebImageError) -> AWSProfileFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return parse(try String(contentsOfFile: path, encoding: .utf8), kind: kind)
        } catch {
            throw WebImageError(.invalidArgument, "cannot read the AWS file \(path)", underlying: error)
        }
    }

    static func parse(_ text: String, kind: Kind) -> AWSProfileFile {
        var file = AWSProfileFile()
        var section: String?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            if rawLine.first?.isWhitespace == true { continue }
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = profileName(String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces), kind: kind)
                if let section, file.profiles[section] == nil { file.profiles[section] = [:] }
                continue
            }
            guard let section, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            file.profiles[section]?[key] = value
        }
        return file
    }

    /// The profile a section header names, or nil for a section that is not a profile
    /// (`[sso-session x]`, `[services x]`).
    private static func profileName(_ header: String, kind: Kind) -> String? {
        switch kind {
        case .credentials:
            return header
        case .config:
            if header == "default" { return header }
            let words = header.split(separator: " ", maxSplits: 1)
            guard words.count == 2, words[0] == "profile" else { return nil }
            return words[1].trimmingCharacters(in: .whitespaces)
        }
    }
}
