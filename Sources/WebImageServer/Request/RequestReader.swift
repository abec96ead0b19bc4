import Foundation
import WebImage

/// The first stage of a request: a proxy path read into a ``ProxyRequest`` (or an `/info`
/// request's source and options), or refused with the reason. It fetches nothing; the source
/// is judged by the allow-list and the bucket rules of the ``SourceFetcher`` it is given.
struct RequestReader: Sendable {
    let parser: OptionsParser
    /// How paths are read beyond the URL format: source rewriting, file names, only presets.
    let pathRules: ProxyPath.Rules
    let signer: URLSigner?
    private let configuration: ImageServerConfiguration

    /// A reader of paths by `configuration`, whose presets and preferred formats are checked now.
    init(configuration: ImageServerConfiguration) throws(WebImageError) {
        try configuration.validate()
        let parser = OptionsParser(configuration: configuration)
        guard !configuration.preferredFormats.isEmpty else { throw WebImageError(.invalidArgument, "the preferred formats are empty") }
        if let unwritable = configuration.preferredFormats.first(where: { !parser.encodableFormats.contains($0) }) {
            throw WebImageError(.invalidArgument, "a preferred format must be one this server writes, not \(unwritable.rawValue)")
        }
        self.parser = parser
        var rules = ProxyPath.Rules(
            rewriting: configuration.sourceRewriting, base64IncludesFilename: configuration.base64URLIncludesFilename,
            onlyPresets: configuration.onlyPresets, argumentsSeparator: configuration.argumentsSeparator)
        rules.allowsS3 = configuration.s3Sources != nil
        rules.allowsGCS = configuration.gcsSources != nil
        rules.querySeparator = configuration.sourceURLQuerySeparator
        pathRules = rules
        signer =
            configuration.signingKeys.isEmpty ? nil : URLSigner(keys: configuration.signingKeys, signatureSize: configuration.signatureSize)
        self.configuration = configuration
    }

    /// A processing path read: parsed, signed, its options read, its source judged.
    func read(
        path: Substring, accept: String?, conditions: Conditions, hints: OptionsParser.ClientHints?, sources fetcher: SourceFetcher
    ) throws(ProxyError) -> ProxyRequest {
        let proxyPath = try ProxyPath(parsing: path, rules: pathRules)
        try checkSignature(proxyPath)
        let options = try parser.parse(
            proxyPath.options, extensionName: proxyPath.extensionName, hints: configuration.enableClientHints ? hints : nil)
        let source = try fetcher.judged(proxyPath.source)
        let choice = formatChoice(options: options, accept: accept)
        return ProxyRequest(
            source: source, options: options, choice: choice,
            key: [source.absoluteString, options.canonical, choice.key].joined(separator: "\n"), vary: varyHeaders(options),
            conditions: conditions)
    }

    /// An `/info` path (without `/info`) read: its source judged and its options, and the key of
    /// its answer in the result store.
    func readInfo(path: Substring, sources fetcher: SourceFetcher) throws(ProxyError) -> (source: URL, options: InfoOptions, key: String) {
        let proxyPath = try ProxyPath(parsing: path, rules: pathRules)
        try checkSignature(proxyPath)
        let options = try parser.parseInfo(proxyPath.options)
        let source = try fetcher.judged(proxyPath.source)
        return (source, options, ["info", source.absoluteString, options.canonical].joined(separator: "\n"))
    }

    private func checkSignature(_ path: ProxyPath) throws(ProxyError) {
        if let signer, signer.isValid(path.signature, for: path.signedPath) { return }
        if configuration.trustedSignatures.contains(String(path.signature)) { return }
        guard configuration.allowsUnsigned else {
            throw .forbidden(signer == nil ? "unsigned URLs are not allowed" : "invalid signature")
        }
        // imgproxy's VerifySignature without keys: a first segment with a `:` is an option
        // where the signature (any text, such as `unsafe`) was left out.
        if path.signature.contains(":") {
            throw .forbidden("the signature appears to be a processing option: the signature section must always be in the URL")
        }
    }

    /// The rule the result's format follows: the URL's format, and the formats the client
    /// accepts that the server chooses (`auto`) or enforces, best first.
    private func formatChoice(options: ProcessingOptions, accept: String?) -> OutputFormatRule {
        var rule = OutputFormatRule(requested: options.format, sourceFormats: configuration.preferredFormats)
        rule.best = options.bestFormat
        let accepted = AcceptHeader(accept)
        let switches: [(ImageFormat, auto: Bool, enforce: Bool)] = [
            (.jpegXL, configuration.autoJXL, configuration.enforceJXL), (.avif, configuration.autoAVIF, configuration.enforceAVIF),
            (.webP, configuration.autoWebP, configuration.enforceWebP),
        ]
        for (format, auto, enforce) in switches where (auto || enforce) && parser.encodableFormats.contains(format) {
            guard accepted.names(format.mimeType) else { continue }
            rule.preferred.append(format)
            if enforce { rule.enforced.append(format) }
        }
        return rule
    }

    /// The request headers an answer depends on: `Accept` when a format may be chosen by it, the
    /// client hints (imgproxy's list) when they are taken.
    private func varyHeaders(_ options: ProcessingOptions) -> [String] {
        var headers: [String] = []
        let negotiates = (configuration.autoWebP || configuration.autoAVIF || configuration.autoJXL) && options.format == nil
        if negotiates || configuration.enforceWebP || configuration.enforceAVIF || configuration.enforceJXL { headers.append("Accept") }
        // imgproxy's spelling (its httpheaders constants): a name is the same whatever its case.
        if configuration.enableClientHints { headers += ["Sec-Ch-Dpr", "Dpr", "Sec-Ch-Width", "Width"] }
        return headers
    }
}
