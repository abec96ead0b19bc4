package import Foundation
package import WebImageCodecs

extension ExifDump {
    /// The `exif` field of a dataset record, as img2dataset fills it: the tags as one JSON text,
    /// nil when the format is not one exifread reads, `{}` when it carries no EXIF.
    package static func json(of data: Data) -> String? {
        tags(of: data).map { members in
            JSONValue.object(members.map { .init(name: $0.0, value: .string($0.1)) }).serialized(asciiOnly: true)
        }
    }
}
