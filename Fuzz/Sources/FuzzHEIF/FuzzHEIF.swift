import FuzzSupport
import WebImageCodecs

/// libFuzzer entry point for the HEIF decoder (see ``fuzzDecoding(_:_:with:)``).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    fuzzDecoding(bytes, count, with: builtInCoder(for: .heic))
    return 0
}
