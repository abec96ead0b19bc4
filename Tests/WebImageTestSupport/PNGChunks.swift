package import Foundation

/// A PNG file's chunks, read without a decoder, for tests that check what an encoder wrote.
package enum PNGChunks {
    package static func types(_ png: Data) -> [String] {
        all(png).map(\.type)
    }

    package static func chunk(_ type: String, in png: Data) -> Data? {
        all(png).first { $0.type == type }?.data
    }

    package static func all(_ png: Data) -> [(type: String, data: Data)] {
        var found: [(String, Data)] = []
        var offset = png.startIndex + 8
        while offset + 12 <= png.endIndex {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
            found.append((type, Data(png[offset + 8..<offset + 8 + length])))
            offset += 12 + length
        }
        return found
    }
}
