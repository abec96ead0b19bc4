// The codecs' types throw the core's error and report through its telemetry: importing
// WebImageCodecs brings WebImageCore along.
@_exported public import WebImageCore
