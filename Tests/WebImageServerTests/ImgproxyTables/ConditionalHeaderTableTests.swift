import Foundation
import Testing
import WebImage
import WebImageTestSupport
import WebImageTesting

@testable import WebImageServer

/// imgproxy v4's conditional headers as ours (eef3b312): `httpheaders/conditionalheaders/request_test.go`
/// (what the source is asked, what the client is sent) and the `ETag` and `Last-Modified` rows of
/// `integration_test/processing_handler_test.go` (a whole request against an origin that checks
/// what it is asked). v4 answers a result with its source's `ETag`; v3 hashed the options into it
/// (docs/imgproxy-options.md, "imgproxy's other tests").
@Suite("imgproxy's tables: conditional headers (conditionalheaders, processing_handler_test.go)", .serialized)
struct ImgproxyConditionalHeaderTableTests {
    /// `TestInjectImageRequestHeaders`'s buster and the dates an hour each side of it.
    static let buster = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01 00:00:00 UTC
    static let afterBuster = HTTPDate.format(buster.addingTimeInterval(3600))
    static let beforeBuster = HTTPDate.format(buster.addingTimeInterval(-3600))
    static let etag1 = "buster/" + URLSigner.base64URL(Array("etag1".utf8))

    struct Forwarding: Sendable, CustomTestStringConvertible {
        var name: String
        var ifModifiedSince: String? = nil
        var ifNoneMatch: String? = nil
        var lastModifiedEnabled = false
        var lastModifiedBuster: Date? = nil
        var etagEnabled = false
        var etagBuster = ""
        /// The `If-None-Match` and `If-Modified-Since` the source is sent.
        var sentETag: String? = nil
        var sentSince: String? = nil
        var testDescription: String { name }
    }

    /// `TestInjectImageRequestHeaders`, every row.
    static let forwardingRows: [Forwarding] = [
        Forwarding(name: "all disabled"),
        Forwarding(
            name: "last modified enabled", ifModifiedSince: afterBuster, lastModifiedEnabled: true, sentSince: afterBuster),
        Forwarding(name: "etag enabled", ifNoneMatch: "etag1", etagEnabled: true, sentETag: "etag1"),
        Forwarding(
            name: "etag/lm enabled with no buster", ifModifiedSince: afterBuster, ifNoneMatch: "etag1", lastModifiedEnabled: true,
            etagEnabled: true, sentETag: "etag1", sentSince: afterBuster),
        Forwarding(
            name: "last modified after buster", ifModifiedSince: afterBuster, lastModifiedEnabled: true, lastModifiedBuster: buster,
            sentSince: afterBuster),
        Forwarding(
            name: "last modified before buster", ifModifiedSince: beforeBuster, lastModifiedEnabled: true, lastModifiedBuster: buster),
        Forwarding(
            name: "last modified enabled with buster, invalid header", ifModifiedSince: "not-a-time", lastModifiedEnabled: true,
            lastModifiedBuster: buster),
        Forwarding(name: "etag buster", ifNoneMatch: etag1, etagEnabled: true, etagBuster: "buster", sentETag: "etag1"),
        Forwarding(
            name: "both enabled, but last modified buster check fails, etag still works", ifModifiedSince: beforeBuster,
            ifNoneMatch: etag1, lastModifiedEnabled: true, lastModifiedBuster: buster, etagEnabled: true, etagBuster: "buster",
            sentETag: "etag1"),
        Forwarding(
            name: "both enabled, if-none-match with invalid base64", ifModifiedSince: afterBuster, ifNoneMatch: "buster/@@@",
            lastModifiedEnabled: true, lastModifiedBuster: buster, etagEnabled: true, etagBuster: "buster"),
        Forwarding(
            name: "both enabled, but etag buster different", ifModifiedSince: afterBuster, ifNoneMatch: etag1,
            lastModifiedEnabled: true, lastModifiedBuster: buster, etagEnabled: true, etagBuster: "different-buster"),
        Forwarding(
            name: "both enabled, but etag with no buster", ifModifiedSince: afterBuster, ifNoneMatch: "W/etag1",
            lastModifiedEnabled: true, lastModifiedBuster: buster, etagEnabled: true, etagBuster: "buster"),
    ]

    @Test("TestInjectImageRequestHeaders: what the source is asked", arguments: forwardingRows)
    func forwarded(row: Forwarding) {
        var configuration = ServerHarness.configuration()
        (configuration.usesLastModified, configuration.lastModifiedBuster) = (row.lastModifiedEnabled, row.lastModifiedBuster)
        (configuration.usesETag, configuration.etagBuster) = (row.etagEnabled, row.etagBuster)
        let conditions = Conditions(ifNoneMatch: row.ifNoneMatch, ifModifiedSince: row.ifModifiedSince, answeredBy: configuration)
        #expect(conditions.forwarded?.etag == row.sentETag)
        #expect(conditions.forwarded?.lastModified == row.sentSince)
    }

    struct Presenting: Sendable, CustomTestStringConvertible {
        var name: String
        var imageETag: String? = nil
        var imageLastModified: String? = nil
        var lastModifiedEnabled = false
        var lastModifiedBuster: Date? = nil
        var etagEnabled = false
        var etagBuster = ""
        var wantLastModified: String? = nil
        var wantETag: String? = nil
        var testDescription: String { name }
    }

    /// `TestInjectUserResponseHeaders`, every row.
    static let presentingRows: [Presenting] = [
        Presenting(name: "all disabled"),
        Presenting(name: "lastmod enabled no header", lastModifiedEnabled: true),
        Presenting(
            name: "lastmod older than buster", imageLastModified: beforeBuster, lastModifiedEnabled: true, lastModifiedBuster: buster,
            wantLastModified: HTTPDate.format(buster)),
        Presenting(
            name: "lastmod after buster", imageLastModified: afterBuster, lastModifiedEnabled: true, lastModifiedBuster: buster,
            wantLastModified: afterBuster),
        Presenting(
            name: "lastmod invalid value", imageLastModified: "not-a-time", lastModifiedEnabled: true, lastModifiedBuster: buster),
        Presenting(name: "etag enabled empty", etagEnabled: true),
        Presenting(
            name: "etag enabled with value", imageETag: "etag1", etagEnabled: true, etagBuster: "buster",
            wantETag: "\"buster/" + URLSigner.base64URL(Array("etag1".utf8)) + "\""),
        Presenting(
            name: "both enabled, both present, lm older", imageETag: "etag2", imageLastModified: beforeBuster,
            lastModifiedEnabled: true, lastModifiedBuster: buster, etagEnabled: true, etagBuster: "buster",
            wantLastModified: HTTPDate.format(buster), wantETag: "\"buster/" + URLSigner.base64URL(Array("etag2".utf8)) + "\""),
    ]

    @Test("TestInjectUserResponseHeaders: what the client is sent", arguments: presentingRows)
    func presented(row: Presenting) {
        var configuration = ServerHarness.configuration()
        (configuration.usesLastModified, configuration.lastModifiedBuster) = (row.lastModifiedEnabled, row.lastModifiedBuster)
        (configuration.usesETag, configuration.etagBuster) = (row.etagEnabled, row.etagBuster)
        let responses = ResponseBuilder(configuration: configuration)
        #expect(responses.presented(etag: row.imageETag) == row.wantETag)
        #expect(responses.presented(lastModified: row.imageLastModified) == row.wantLastModified)
    }

    /// The integration rows: `TestETagDataMatch` (the origin is asked with the client's
    /// `If-None-Match` and its 304 is ours, with its ETag), `EtagBusterTest` (its exact value),
    /// `TestLastModifiedEnabled`/`Disabled`, `TestModifiedSinceReqExactMatchLastModifiedEnabled`
    /// (the origin's bare 304 is ours) and `...Disabled` (nothing is passed on), and the
    /// `CompareTooOld` pair (an older date is passed on, the origin answers the image).
    @Test("processing_handler_test.go: the origin is asked with the client's conditions and its 304 is the answer")
    func againstAnOrigin() async throws {
        let png = [UInt8](try Fixture.data("gradient-rgba.png"))
        let october2015 = "Wed, 21 Oct 2015 07:28:00 GMT"
        var busted = ServerHarness.configuration()
        busted.etagBuster = "buster"
        try await ServerHarness.inProcess(busted) { harness throws in
            // EtagBusterTest expects `"buster/bG9yZW1pcHN1bWRvbG9y"`, the tag's base64 without
            // its quotes; but testify runs only methods named `Test...`, so that row never runs,
            // and `injectEtagHeader` (and TestInjectUserResponseHeaders, which does run) wraps the
            // header as sent, quotes and all: that is what v4 answers, and what is checked here.
            harness.origin.route("/tagged.png", .ok(png, contentType: "image/png").tagged("\"loremipsumdolor\""))
            let answer = try await harness.get(harness.signedPlain("rs:fill:4:4", "/tagged.png"))
            #expect(answer.header("ETag") == "\"buster/" + URLSigner.base64URL(Array("\"loremipsumdolor\"".utf8)) + "\"")
            #expect(answer.header("ETag") == "\"buster/ImxvcmVtaXBzdW1kb2xvciI\"")
        }
        try await ServerHarness.inProcess { harness throws in
            // TestETagDataMatch.
            harness.origin.route("/match.png", .ok(png, contentType: "image/png").tagged("\"loremipsumdolor\""))
            let match = try await harness.get(harness.signedPlain("w:8", "/match.png"), headers: [("If-None-Match", "\"loremipsumdolor\"")])
            #expect(match.status == 304 && match.header("ETag") == "\"loremipsumdolor\"")
            #expect(harness.origin.requests(to: "/match.png").map { $0.header("If-None-Match") } == ["\"loremipsumdolor\""])
            // TestLastModifiedEnabled and TestModifiedSinceReqExactMatchLastModifiedEnabled.
            var dated = OriginResponse.ok(png, contentType: "image/png")
            dated.lastModified = october2015
            harness.origin.route("/dated.png", dated)
            let exact = try await harness.get(harness.signedPlain("w:8", "/dated.png"), headers: [("If-Modified-Since", october2015)])
            #expect(exact.status == 304)
            #expect(harness.origin.requests(to: "/dated.png").map { $0.header("If-Modified-Since") } == [october2015])
            // TestModifiedSinceReqCompareTooOldLastModifiedEnabled: passed on, answered in full.
            harness.origin.route("/older.png", dated)
            let old = "Tue, 01 Oct 2013 17:31:00 GMT"
            let tooOld = try await harness.get(harness.signedPlain("w:8", "/older.png"), headers: [("If-Modified-Since", old)])
            #expect(tooOld.status == 200 && tooOld.header("Last-Modified") == october2015)
            #expect(harness.origin.requests(to: "/older.png").map { $0.header("If-Modified-Since") } == [old])
        }
        var off = ServerHarness.configuration()
        (off.usesETag, off.usesLastModified) = (false, false)
        try await ServerHarness.inProcess(off) { harness throws in
            // TestLastModifiedDisabled, TestModifiedSinceReqExactMatchLastModifiedDisabled, and
            // TestETagDisabled's header.
            var dated = OriginResponse.ok(png, contentType: "image/png").tagged("\"e\"")
            dated.lastModified = october2015
            harness.origin.route("/dated.png", dated)
            let answer = try await harness.get(
                harness.signedPlain("w:8", "/dated.png"), headers: [("If-Modified-Since", october2015), ("If-None-Match", "\"e\"")])
            #expect(answer.status == 200 && answer.header("Last-Modified") == nil && answer.header("ETag") == nil)
            let asked = harness.origin.requests(to: "/dated.png")
            #expect(asked.count == 1 && asked[0].header("If-Modified-Since") == nil && asked[0].header("If-None-Match") == nil)
        }
    }

    /// `storage/fs/reader.go`: a local file's ETag is `"base64url(SHA-256(PATH__SIZE__MTIME))"`,
    /// its Last-Modified its time of change, and a request naming either is a 304 (TestETagDisabled's
    /// `local:///` source: with ETags off, none).
    @Test("a local file's ETag and Last-Modified, as imgproxy's file storage makes them, and its 304")
    func localFiles() async throws {
        let root = try TemporaryDirectory("conditional-local")
        let png = try Fixture.data("gradient-rgba.png")
        let file = root.url.appendingPathComponent("test1.png")
        try png.write(to: file)
        let modified = Date(timeIntervalSince1970: 1_700_000_000.25)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path)
        var status = stat()
        #expect(stat(file.path, &status) == 0)
        let nanoseconds = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        let expected = LocalFile.etag(path: "/test1.png", size: Int64(png.count), modifiedNanoseconds: nanoseconds)
        #expect(expected.hasPrefix("\"") && expected.count == 45, "43 base64url characters of a SHA-256, quoted")
        var configuration = ServerHarness.configuration()
        configuration.localFilesystemRoot = root.path
        try await ServerHarness.inProcess(configuration) { harness throws in
            let path = harness.signer.sign("/rs:fill:4:4/plain/local:///test1.png")
            let answer = try await harness.get(path)
            #expect(answer.status == 200 && answer.header("ETag") == expected)
            #expect(answer.header("Last-Modified") == "Tue, 14 Nov 2023 22:13:20 GMT")
            try harness.server.proxy.store.disk.removeAll()
            #expect(try await harness.get(path, headers: [("If-None-Match", expected)]).status == 304)
        }
        configuration.usesETag = false
        try await ServerHarness.inProcess(configuration) { harness throws in
            #expect(try await harness.get(harness.signer.sign("/rs:fill:4:4/plain/local:///test1.png")).header("ETag") == nil)
        }
    }
}
