import WebImage

extension OptionsParser {
    /// The parser a server with `configuration` reads its paths with: the formats it can write,
    /// the allowed options, the presets, the defaults imgproxy lets its configuration set.
    init(configuration: ImageServerConfiguration) {
        let coders = CodersManager.shared
        // Not HEIC: Debian's x265 leaks 1,168 bytes in every x265_encoder_open, once per image
        // (scripts/lsan-suppressions.txt), which a long-running server must not pay per request.
        let encodable = Set(
            ImageFormat.allCases.filter { format in format != .heic && coders.all.contains { $0.canEncode(to: format) } })
        // Only-presets paths name presets with `pr`, whatever the allowed options.
        let allowed = configuration.allowedProcessingOptions.map { configuration.onlyPresets ? $0.union(["pr", "preset"]) : $0 }
        var base = ProcessingOptions()
        base.stripMetadata = configuration.stripMetadata
        base.stripColorProfile = configuration.stripColorProfile
        base.preserveHDR = configuration.preserveHDR
        base.autoRotate = configuration.autoRotate
        base.keepCopyright = configuration.keepCopyright
        base.enforceThumbnail = configuration.enforceThumbnail
        base.videoThumbnailSecond = configuration.videoThumbnails.second
        base.videoThumbnailKeyframes = configuration.videoThumbnails.keyframesOnly
        base.unsharpMasking = configuration.unsharpMasking
        if configuration.autoqualityByDefault { base.autoquality = configuration.autoqualityDefaults }
        base.skipProcessing = configuration.skipProcessingFormats
        self.init(
            presets: configuration.presets, encodableFormats: encodable, allowedOptions: allowed, baseOptions: base,
            argumentsSeparator: configuration.argumentsSeparator, allowsSecurityOptions: configuration.allowsSecurityOptions,
            autoqualityDefaults: configuration.autoqualityDefaults)
    }
}
