extension Sequence<UInt8> {
    /// The bytes as lowercase hex, two digits each: digests as the disk cache names its files,
    /// SigV4 signs, and img2dataset records hashes.
    package var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
