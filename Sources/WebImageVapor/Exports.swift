// The module is empty without the Vapor trait: `.package(url: ..., from: ..., traits: ["Vapor"])`.
#if Vapor
@_exported public import WebImageServer
#endif
