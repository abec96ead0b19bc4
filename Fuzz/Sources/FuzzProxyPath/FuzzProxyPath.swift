import Foundation
@testable import WebImageServer

/// libFuzzer entry point for the image proxy's request parsing: the bytes as a request path
/// through `ProxyPath`, the signature check, `OptionsParser` (with a preset), and the plan and
/// transformers those options give for a large and a tiny source. Every input must end in a
/// value or a `ProxyError`; a trap (an overflow in the size arithmetic, an index out of range)
/// is a finding.
let parser = OptionsParser(presets: ["thumb": "rs:fill:100:100/q:70"])
let signer = URLSigner(keys: [SigningKey(key: Array("secret".utf8), salt: Array("hello".utf8))], signatureSize: 32)
let fixedNow = Date(timeIntervalSince1970: 1_800_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let path = text.hasPrefix("/") ? Substring(text) : Substring("/" + text)
    guard let parsed = try? ProxyPath(parsing: path) else { return 0 }
    _ = signer.isValid(parsed.signature, for: parsed.signedPath)
    guard let options = try? parser.parse(parsed.options, extensionName: parsed.extensionName, now: fixedNow) else { return 0 }
    _ = options.canonical
    for (width, height) in [(2048, 1365), (1, 1), (3, 40_000)] {
        guard let plan = try? ProcessingPlan(options: options, sourceWidth: width, sourceHeight: height) else { continue }
        _ = plan.transformers(options: options, decodedWidth: width, decodedHeight: height, sourceWidth: width)
    }
    return 0
}
