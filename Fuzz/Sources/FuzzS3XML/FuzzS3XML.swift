import Foundation
@testable import WebImageS3

/// libFuzzer entry point for what the S3 client reads from a server: the bytes as an XML
/// document (`S3XMLReader`), as a ListObjectsV2 page, as a ListMultipartUploads page and as an
/// `<Error>` answer. Every input must
/// end in a value or a `WebImageError`; a trap (an index out of range, runaway recursion) is a
/// finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(UnsafeBufferPointer(start: bytes, count: count))
    _ = try? S3XMLReader.parse(data)
    _ = try? S3Client.listPage(data, bucket: "fuzz")
    _ = try? S3Client.uploadsPage(data, bucket: "fuzz")
    _ = S3ServiceError.from(status: 503, body: data, requestID: nil)
    return 0
}
