import Foundation
import Testing
import WebImageDownloader
import WebImageTestSupport

@Suite("Protocol text")
struct HTTPHeaderLookupTests {
    @Test("header names match without regard to ASCII case, and only whole names match")
    func headerLookup() {
        let head = DownloadResponseHead(
            statusCode: 200,
            headers: [
                ("content-type", "image/png"), ("Content-Length", "12"), ("X-Straße", "a"), ("ETAG", "\"v1\""),
                ("Content-Type", "text/html"),
            ])
        #expect(head.header("Content-Type") == "image/png", "the first of repeated headers")
        #expect(head.header("CONTENT-LENGTH") == "12")
        #expect(head.header("etag") == "\"v1\"")
        #expect(head.header("Content-Len") == nil)
        #expect(head.header("Content-Lengths") == nil)
        #expect(head.header("X-STRASSE") == nil, "no Unicode folding of non-ASCII names")
        #expect(head.header("X-Straße") == "a")
    }

    @Test("no-store is found among Cache-Control directives in any case and spacing")
    func noStore() {
        func storable(_ cacheControl: String?) -> Bool {
            LoadedData(data: Data([1]), url: URL(string: "http://127.0.0.1/a")!, cacheControl: cacheControl).isStorable
        }
        #expect(storable(nil))
        #expect(storable("max-age=60, public"))
        #expect(!storable("no-store"))
        #expect(!storable("max-age=0,\t No-Store "))
        #expect(storable("no-stored"))
    }

    @Test("media types are read without case, whitespace or parameters")
    func mediaTypes() {
        #expect(ImageFormat(mimeType: " IMAGE/PNG ; charset=binary") == .png)
        #expect(ImageFormat(mimeType: "\timage/jpeg") == .jpeg)
        #expect(ImageFormat(mimeType: "text/html") == nil)
        #expect(ImageFormat(mimeType: "   ") == nil)
    }
}
