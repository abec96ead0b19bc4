// The loaders report the codecs' `WebImageError` and sniff `ImageFormat`: importing
// WebImageDownloader brings them along.
@_exported public import WebImageCodecs
