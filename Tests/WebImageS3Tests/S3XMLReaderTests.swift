import Foundation
import Testing
import WebImageCore

@testable import WebImageS3

@Suite("S3's XML answers")
struct S3XMLReaderTests {
    @Test("an S3 error document: the declaration, a namespace, entities and CDATA")
    func errorDocument() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment -->
            <Error xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Code>NoSuchKey</Code>
            <Message>The key &quot;a&amp;b&lt;c&gt;&apos; &#233;&#x20AC;</Message><Key><![CDATA[x<y>&z]]></Key><Empty/></Error>
            """
        let root = try S3XMLReader.parse(Data(xml.utf8))
        #expect(root.name == "Error")
        #expect(root["Code"] == "NoSuchKey")
        #expect(root["Message"] == "The key \"a&b<c>' é€")
        #expect(root["Key"] == "x<y>&z")
        #expect(root.child("Empty")?.text == "")
    }

    @Test("namespace prefixes are dropped; attributes with > in quotes are read past")
    func prefixesAndAttributes() throws {
        let root = try S3XMLReader.parse(Data(#"<s3:List a="1>2" b='x'><s3:Key k="v">one</s3:Key></s3:List>"#.utf8))
        #expect(root.name == "List")
        #expect(root["Key"] == "one")
    }

    @Test(
        "malformed documents are badServerResponse errors, never a crash",
        arguments: [
            "", "   ", "text", "<a>", "<a></b>", "<a><b></a></b>", "<a>&unknown;</a>", "<a>&#xZZ;</a>", "<a>&#1114112;</a>",
            "<a b=\"unterminated></a>",
            "<a/><b/>", "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "<a><!-- never closed</a>", "<a><![CDATA[open</a>", "< a></a>",
            "<a>\u{0}</a",
            String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100),
        ])
    func malformed(_ text: String) {
        #expect(throws: WebImageError(.badServerResponse)) { try S3XMLReader.parse(Data(text.utf8)) }
    }

    @Test("text that is not UTF-8 is refused")
    func notUTF8() {
        #expect(throws: WebImageError(.badServerResponse)) {
            try S3XMLReader.parse(Data([0x3C, 0x61, 0x3E, 0xFF, 0xFE, 0x3C, 0x2F, 0x61, 0x3E]))
        }
    }

    @Test(
        "a listing page: keys decoded from encoding-type=url, prefixes, the continuation token; a truncated page without a token is refused"
    )
    func listPage() throws {
        let page = try S3Client.listPage(
            Data(
                """
                <ListBucketResult><Name>b</Name><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
                <NextContinuationToken>tok+/=</NextContinuationToken>
                <Contents><Key>a+b%2Bc%C3%A9%0A</Key><Size>12</Size><ETag>&quot;e&quot;</ETag><LastModified>2024-05-01T10:00:00.000Z</LastModified></Contents>
                <CommonPrefixes><Prefix>dir%2F</Prefix></CommonPrefixes></ListBucketResult>
                """.utf8), bucket: "b")
        #expect(
            page.objects == [
                S3ListedObject(key: "a b+cé\n", size: 12, etag: "\"e\"", lastModified: Date(timeIntervalSince1970: 1_714_557_600))
            ])
        #expect(page.commonPrefixes == ["dir/"])
        #expect(page.nextContinuationToken == "tok+/=")
        #expect(throws: WebImageError(.badServerResponse)) {
            try S3Client.listPage(Data("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>".utf8), bucket: "b")
        }
        #expect(throws: WebImageError(.badServerResponse)) {
            try S3Client.listPage(Data("<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>".utf8), bucket: "b")
        }
        #expect(throws: WebImageError(.badServerResponse)) { try S3Client.listPage(Data("<Other/>".utf8), bucket: "b") }
    }

    /// The fields of ListMultipartUploadsResult as AWS's API reference spells them
    /// (docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html).
    @Test("a page of pending uploads: keys and ids, the next markers of a truncated page (the last upload's when absent)")
    func uploadsPage() throws {
        let truncated = try S3Client.uploadsPage(
            Data(
                """
                <ListMultipartUploadsResult><Bucket>b</Bucket><IsTruncated>true</IsTruncated>
                <NextKeyMarker>k2</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>
                <Upload><Key>k1 &amp;</Key><UploadId>u1</UploadId><Initiated>2024-05-01T10:00:00.000Z</Initiated></Upload>
                <Upload><Key>k2</Key><UploadId>u2</UploadId></Upload></ListMultipartUploadsResult>
                """.utf8), bucket: "b")
        #expect(
            truncated.uploads == [
                S3PendingUpload(key: "k1 &", uploadID: "u1", initiated: Date(timeIntervalSince1970: 1_714_557_600)),
                S3PendingUpload(key: "k2", uploadID: "u2", initiated: nil),
            ])
        #expect(truncated.next?.key == "k2" && truncated.next?.upload == "u2")
        let unmarked = try S3Client.uploadsPage(
            Data(
                "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated><Upload><Key>z</Key><UploadId>v</UploadId></Upload></ListMultipartUploadsResult>"
                    .utf8),
            bucket: "b")
        #expect(unmarked.next?.key == "z" && unmarked.next?.upload == "v")
        let last = try S3Client.uploadsPage(
            Data("<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>".utf8), bucket: "b")
        #expect(last.uploads.isEmpty && last.next == nil)
        #expect(throws: WebImageError(.badServerResponse)) {
            try S3Client.uploadsPage(
                Data("<ListMultipartUploadsResult><IsTruncated>true</IsTruncated></ListMultipartUploadsResult>".utf8), bucket: "b")
        }
        #expect(throws: WebImageError(.badServerResponse)) {
            try S3Client.uploadsPage(
                Data("<ListMultipartUploadsResult><Upload><Key>k</Key></Upload></ListMultipartUploadsResult>".utf8), bucket: "b")
        }
        #expect(throws: WebImageError(.badServerResponse)) { try S3Client.uploadsPage(Data("<Other/>".utf8), bucket: "b") }
    }
}
