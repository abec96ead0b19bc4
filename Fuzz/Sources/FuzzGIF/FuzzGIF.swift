import FuzzSupport
import WebImageCodecs

/// libFuzzer entry point for the GIF decoder (see ``fuzzDecoding(_:_:with:)``).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    fuzzDecoding(bytes, count, with: builtInCoder(for: .gif))
    return 0
}
