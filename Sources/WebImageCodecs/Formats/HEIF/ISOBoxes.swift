/// The boxes of an ISO base media file (ISO/IEC 14496-12, 4.2) laid one after another: each a
/// 32-bit size (1: a 64-bit one follows the type; 0: to the end), a four-character type and its
/// payload. Reading stops at a box that does not fit.
struct ISOBoxes {
    let boxes: [(type: String, payload: UnsafeRawBufferPointer)]

    init(_ bytes: UnsafeRawBufferPointer) {
        var boxes: [(type: String, payload: UnsafeRawBufferPointer)] = []
        var reader = BigEndianReader(bytes)
        while let size = reader.unsigned(4), let type = reader.bytes(4) {
            let header = size == 1 ? 16 : 8
            guard let length = size == 1 ? reader.unsigned64(8) : size == 0 ? UInt64(bytes.count - reader.offset + 8) : UInt64(size),
                length >= UInt64(header), length - UInt64(header) <= UInt64(bytes.count - reader.offset),
                let payload = reader.bytes(Int(length) - header)
            else { break }
            boxes.append((String(decoding: type, as: UTF8.self), payload))
        }
        self.boxes = boxes
    }

    func first(_ type: String) -> UnsafeRawBufferPointer? { boxes.first { $0.type == type }?.payload }

    func all(_ type: String) -> [UnsafeRawBufferPointer] { boxes.filter { $0.type == type }.map(\.payload) }
}
