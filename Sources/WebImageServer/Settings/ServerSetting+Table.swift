import Foundation
import Logging
import WebImage

/// Every setting, in the order docs/serve.md's table lists them.
extension ServerSetting {
    package static let all: [ServerSetting] =
        listening + signing + sources + s3Sources + caching + limits + video + formats + encoding
        + processingDefaults + paths + pages + logging

    /// Where the server listens and how long it waits.
    static let listening: [ServerSetting] = [
        ServerSetting(
            "BIND", form: .value("HOST:PORT"), imgproxy: .init("BIND", .bind), default: "`127.0.0.1:8080`",
            help: "where to listen (port 0 picks a free one, printed as `listening on http://HOST:PORT`)"
        ) { (values, settings) throws(WebImageError) in
            (settings.configuration.host, settings.configuration.port) = try SettingText.address(values.last)
        },
        ServerSetting(
            "OPS_BIND", form: .value("HOST:PORT"), imgproxy: .init("PROMETHEUS_BIND", .bind), default: "none",
            help:
                "a port of its own for `/ready`, `/metrics` and `/status`, which then answer 404 on the public port; `/health` answers on both. The command prints `operations on http://HOST:PORT`; while a SIGTERM drains the public port, this one stays up and `/ready` answers 503. It has the public port's read and write deadlines, idle timeout, header limits and `--max-clients` (counted apart)"
        ) { (values, settings) throws(WebImageError) in
            let (host, port) = try SettingText.address(values.last)
            (settings.configuration.operationsHost, settings.configuration.operationsPort) = (host, port)
        },
        .integer(
            "MAX_CLIENTS", \.maximumClients, "N", rule: SettingRule(holds: { $0 >= 0 }, text: "is 0 (no limit) or more"),
            imgproxy: .init("MAX_CLIENTS", .integer), default: "2048",
            help: "client connections at once; at the limit new ones wait in the backlog (0: no limit)"),
        .integer(
            "IDLE_TIMEOUT", \.idleTimeout, "SECONDS", rule: .positive, imgproxy: .init("KEEP_ALIVE_TIMEOUT", .positive), default: "60",
            help: "seconds an idle client connection stays open"),
        .duration(
            "READ_REQUEST_TIMEOUT", \.readRequestTimeout, imgproxy: .init("READ_REQUEST_TIMEOUT", .positive), default: "10",
            help: "a request must arrive whole within these seconds, else the connection is closed"),
        .duration(
            "WRITE_RESPONSE_TIMEOUT", \.writeResponseTimeout, imgproxy: .init("WRITE_RESPONSE_TIMEOUT", .positive), default: "10",
            help: "a response must be written whole within these seconds, else the connection is closed"),
        .duration(
            "REQUEST_TIMEOUT", \.requestTimeout, imgproxy: .init("TIMEOUT", .integer), default: "30",
            help: "the most seconds a whole request may take, then 504"),
        .duration(
            "PROCESSING_TIMEOUT", \.processingTimeout, default: "20",
            help: "decoding, transforming and encoding one result once it has a slot, then 504 (the job stops at its next step)"),
        .optionalDuration(
            "GRACEFUL_STOP_TIMEOUT", \.gracefulStopTimeout, imgproxy: .init("GRACEFUL_STOP_TIMEOUT", .positive),
            default: "request timeout + 5",
            help:
                "how long SIGTERM waits for requests in flight before cancelling them (imgproxy's 20 s suits its 10 s timeout; ours outlasts the request timeout so a drain cuts nothing short)"
        ),
        .duration(
            "DRAIN_GRACE", \.drainGrace, allowsZero: true, default: "1",
            help:
                "once a graceful stop begins, how long an idle client connection stays open so that a request already on its way (from nginx's kept-alive pool, say) is answered with `Connection: close` instead of meeting the close; 0 closes idle connections at once"
        ),
        .integer(
            "CONCURRENCY", \.concurrency, "N", rule: .positive, imgproxy: .init("WORKERS", .integer), default: "cores",
            help: "results processed at once (downloads take no slot)"),
        .integer(
            "QUEUE", \.queueLength, "N", rule: .nonNegative, imgproxy: .init("REQUESTS_QUEUE_SIZE", .limit), default: "64",
            help: "requests waiting for a slot; more get 503"),
    ]

    /// Signatures and what a URL may ask for itself.
    static let signing: [ServerSetting] = [
        ServerSetting(
            "KEY", form: .repeatable("HEX"), imgproxy: .init("KEY", .hexList), default: "none",
            help: "a signing key in hex, paired in order with the salts (several rotate keys: the first signs)"
        ) { values, settings in settings.parts.keys = values },
        ServerSetting(
            "SALT", form: .repeatable("HEX"), imgproxy: .init("SALT", .hexList), default: "none", help: "a signing salt in hex"
        ) { values, settings in settings.parts.salts = values },
        ServerSetting(
            "KEY_FILE", form: .value("PATH"), default: "none", help: "signing keys in hex, one a line (kept out of `ps`, unlike `--key`)",
            read: reading(\.parts.keyFile)
        ),
        ServerSetting("SALT_FILE", form: .value("PATH"), default: "none", help: "salts in hex, one a line, paired with the keys' lines") {
            values, settings in settings.parts.saltFile = values.last
        },
        .integer(
            "SIGNATURE_SIZE", \.signatureSize, "N", rule: .within(1...32), imgproxy: .init("SIGNATURE_SIZE", .integer), default: "32",
            help: "bytes of the HMAC a signature keeps"),
        .flag(
            "ALLOW_UNSIGNED", \.allowsUnsigned,
            help: "accept URLs with any signature segment (such as `/unsafe/...`); logs a warning at start-up"),
        ServerSetting(
            "TRUSTED_SIGNATURES", form: .value("SIGNATURE,..."), imgproxy: .init("TRUSTED_SIGNATURES", .list), default: "none",
            help: "signatures accepted without checking"
        ) { values, settings in settings.configuration.trustedSignatures = Set(SettingText.list(values.last)) },
        .flag(
            "ALLOW_SECURITY_OPTIONS", \.allowsSecurityOptions, imgproxy: .init("ALLOW_SECURITY_OPTIONS", .boolean),
            help:
                "URLs may set `msr`, `msfs` (at most `--max-src-bytes`), `maf`, `mafr` and `mrd` for themselves; else those options answer 403"
        ),
        .text(
            "SECRET", \.secret, "TOKEN", imgproxy: .init("SECRET", .text),
            help: "proxy requests must carry `Authorization: Bearer TOKEN` (403 otherwise)"),
    ]

    /// The limits a source and a result are held to.
    static let limits: [ServerSetting] = [
        .megapixels(
            "MAX_SRC_RESOLUTION", \.maximumSourceMegapixels, maximum: 1000, imgproxy: .init("MAX_SRC_RESOLUTION", .decimal), default: "50",
            help:
                "the most megapixels a source may declare, from its header; of an animation the first frames that fit together are kept (imgproxy refuses it)"
        ),
        .integer(
            "MAX_SRC_BYTES", \.maximumSourceBytes, "N", rule: .positive, imgproxy: .init("MAX_SRC_FILE_SIZE", .limit), default: "50 MiB",
            help: "the most bytes read from a source, stopped while streaming (422 above it)"),
        .integer(
            "MAX_ANIMATION_FRAMES", \.maximumAnimationFrames, "N", rule: .positive, imgproxy: .init("MAX_ANIMATION_FRAMES", .integer),
            default: "100", help: "frames of an animated source kept, the first ones (as imgproxy; 1 makes a still)"),
        .megapixels(
            "MAX_ANIMATION_FRAME_RESOLUTION", \.maximumAnimationFrameMegapixels, maximum: 1000, allowsZero: true,
            imgproxy: .init("MAX_ANIMATION_FRAME_RESOLUTION", .decimal), default: "0",
            help: "above 0, an animation's frames are each held to it instead of all together to `--max-src-resolution`"),
        .integer(
            "MAX_RESULT_DIMENSION", \.maximumResultDimension, "PX", rule: .positive, imgproxy: .init("MAX_RESULT_DIMENSION", .limit),
            default: "8192", help: "width or height of a result (a larger one is scaled down to fit)"),
        .megapixels(
            "MAX_RESULT_RESOLUTION", \.maximumResultMegapixels, maximum: 400, default: "40",
            help: "pixels of a result, an animation's frames together (a larger one is scaled down to fit)"),
    ]
}
