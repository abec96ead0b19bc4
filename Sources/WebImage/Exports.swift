// `import WebImage` is the whole library: the manager and the front of the caches here, and
// the modules below it, which a user who needs only one part can import alone.
@_exported public import WebImageCaching
@_exported public import WebImageCodecs
@_exported public import WebImageDownloader
