// The caches store and return the codecs' types (`Image`, `WebImageError`): importing
// WebImageCaching brings them along.
@_exported public import WebImageCodecs
