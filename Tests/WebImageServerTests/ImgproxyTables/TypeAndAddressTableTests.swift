import Foundation
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// imgproxy's source-type detection tests as ours (`imagetype/type_test.go` and
/// `imagetype/svg_test.go` at v4, eef3b312): what a source's bytes are taken for.
@Suite("imgproxy's tables: image types (imagetype/*_test.go)")
struct ImgproxyImageTypeTableTests {
    private func sniff(_ text: String) -> ImageFormat? {
        ImageFormat(sniffing: Array(text.utf8))
    }

    /// `TestDetect`: one file of each type, our fixture of that type in place of imgproxy's
    /// `testdata/test-images`. Its RAW row (a CR2 taken for Unknown by its extension though its
    /// bytes are TIFF's) does not hold here: a source is judged by its bytes alone, and no CR2 is
    /// among the fixtures (docs/imgproxy-options.md, "imgproxy's other tests").
    @Test(
        "TestDetect: JPEG, JPEG XL, PNG, WebP, GIF, ICO, SVG, HEIC, BMP and TIFF files",
        arguments: [
            ("gradient.jpg", ImageFormat.jpeg), ("jxl/photo.jxl", .jpegXL), ("gradient-rgba.png", .png), ("gradient-lossy.webp", .webP),
            ("animated.gif", .gif), ("bmp/bmp-24-alpha.ico", .ico), ("svg/gradient.svg", .svg), ("heif/photo.heic", .heic),
            ("bmp/24-bit.bmp", .bmp), ("tiff/rgb-lzw.tiff", .tiff),
        ])
    func detect(file: String, type: ImageFormat) throws {
        #expect(ImageFormat(sniffing: try Fixture.data(file)) == type)
    }

    /// `TestSVGDetectSuccess`.
    @Test("TestSVGDetectSuccess: a plain root, a prefixed root, a document cut short")
    func svgDetected() {
        #expect(sniff(#"<svg xmlns="http://www.w3.org/2000/svg"></svg>"#) == .svg)
        #expect(sniff(#"<svg:svg xmlns:svg="http://www.w3.org/2000/svg"></svg:svg>"#) == .svg)
        #expect(sniff(#"<svg xmlns="http://www.w3.org/2000/svg">SomethingSomething..."#) == .svg)
    }

    /// `TestSVGDetectNotSvg`: its last row's bytes start with `BM`, BMP's signature, so they are
    /// taken for BMP here as by imgproxy's magic-byte detectors, which run before its SVG one.
    @Test("TestSVGDetectNotSvg: an HTML page, another XML root, comments alone, binary bytes")
    func svgNotDetected() {
        #expect(sniff("<html><body>Not an SVG</body></html>") == nil)
        #expect(sniff(#"<?xml version="1.0" encoding="UTF-8"?><not-svg></not-svg>"#) == nil)
        #expect(sniff("<!-- Only comments -->") == nil)
        #expect(ImageFormat(sniffing: [0x42, 0x4D, 0x3C, 0x3F, 0x78, 0x6D, 0x6C, 0x20]) != .svg)
    }

    /// `TestSVGDetectError`'s first half: data that ends before any element is not an SVG (its
    /// second half, a reader failing, has no counterpart: sniffing reads bytes already fetched).
    @Test("TestSVGDetectError: nothing to read is not an SVG")
    func svgEmpty() {
        #expect(sniff("") == nil)
        #expect(sniff("<?xml version=\"1.0\"?>") == nil)
    }
}

/// imgproxy's SSRF address tests as ours (`privatenet/privatenet_test.go` at v4, eef3b312)
/// against the downloader's address policy (`AddressPolicy.specialRange`), which refuses what
/// imgproxy's `IsPrivate`, `IsLoopback` and `IsLinkLocal` catch, including an IPv4 address
/// carried in IPv6. The policy is stricter in two places, on purpose: the NAT64 local-use
/// prefix (`64:ff9b:1::/48`) is refused whole rather than unwrapped, and a Teredo address is
/// refused when either the server or the client address it carries is special, where imgproxy
/// reads the client alone.
@Suite("imgproxy's tables: private networks (privatenet/privatenet_test.go)")
struct ImgproxyPrivateNetworkTableTests {
    private func refused(_ text: String) -> Bool {
        AddressPolicy.specialRange(of: IPAddress(text)!) != nil
    }

    private func address(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
    }

    /// `TestIsPrivate`.
    @Test(
        "TestIsPrivate: RFC 1918, CGNAT and its edges, public IPv4, ULA, public IPv6",
        arguments: [
            ("10.0.0.1", true), ("172.16.0.1", true), ("192.168.1.1", true), ("100.64.0.0", true), ("100.64.0.1", true),
            ("100.127.255.255", true), ("100.63.255.255", false), ("100.128.0.0", false), ("8.8.8.8", false), ("1.1.1.1", false),
            ("fc00::1", true), ("fd00::1", true), ("2001:4860::1", false),
        ])
    func isPrivate(address: String, refusedThere: Bool) {
        #expect(refused(address) == refusedThere)
    }

    /// `TestRegressionCombined`: IPv6 forms that carry a private or CGNAT address are refused;
    /// those that carry a public one are not.
    @Test(
        "TestRegressionCombined: IPv4 inside IPv6, judged as IPv4",
        arguments: [
            ("::10.0.0.1", true), ("::100.64.0.1", true), ("2002:c0a8:0001::", true), ("64:ff9b::172.16.0.1", true),
            ("64:ff9b::100.64.0.1", true), ("::8.8.8.8", false), ("2002:0101:0101::", false), ("64:ff9b::8.8.8.8", false),
            ("10.0.0.1", true), ("100.64.0.1", true), ("8.8.8.8", false),
        ])
    func combined(address: String, refusedThere: Bool) {
        #expect(refused(address) == refusedThere)
    }

    /// `TestIsLoopback` and `TestIsLinkLocal`: every special row refused, every public one not.
    @Test(
        "TestIsLoopback and TestIsLinkLocal",
        arguments: [
            ("127.0.0.1", true), ("127.0.0.254", true), ("0.0.0.0", true), ("8.8.8.8", false), ("::1", true), ("::", true),
            ("2001:4860::8888", false), ("::127.0.0.1", true), ("169.254.0.1", true), ("169.254.169.254", true), ("fe80::1", true),
            ("::169.254.0.1", true),
        ])
    func loopbackAndLinkLocal(address: String, refusedThere: Bool) {
        #expect(refused(address) == refusedThere)
    }

    /// `TestUnwrap`'s rows whose carried address is private, loopback or CGNAT: each refused, in
    /// whichever form carries it (IPv4-compatible, 6to4, NAT64 well-known and local-use, Teredo,
    /// ISATAP with either interface identifier). Its public rows: the IPv4-compatible, 6to4 and
    /// NAT64 ones pass; the local-use prefix and a Teredo address with a zero server are refused
    /// here whatever they carry (the suite's note).
    @Test("TestUnwrap: every embedding of a special address is refused")
    func unwrap() {
        for text in ["::10.0.0.1", "::127.0.0.1", "2002:0a00:0001::", "2002:6440:0001::", "64:ff9b::10.0.0.1", "64:ff9b::100.64.0.1"] {
            #expect(refused(text), "\(text)")
        }
        // imgproxy's local-use rows write the /48 prefix as the bytes 64 ff 9b 01 00 00, which is
        // 64ff:9b01::/48, not RFC 8215's 64:ff9b:1::/48 (00 64 ff 9b 00 01), in its test and in
        // `privatenet.go` alike: the rows here carry the same IPv4 addresses under the RFC's
        // prefix, and imgproxy's bytes are an ordinary address (checked below).
        let localUse: [[UInt8]] = [
            [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00],
            [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00],
        ]
        let teredo: [UInt8] = [0x20, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf5, 0xff, 0xff, 0xfe]
        let isatap: [[UInt8]] = [
            [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0x00, 0x00, 0x5e, 0xfe, 0x0a, 0x00, 0x00, 0x01],
            [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0x02, 0x00, 0x5e, 0xfe, 0xc0, 0xa8, 0x01, 0x01],
        ]
        for bytes in localUse + [teredo] + isatap {
            #expect(refused(address(bytes)), "\(address(bytes))")
        }
        for text in ["::8.8.8.8", "2002:0808:0808::", "64:ff9b::8.8.8.8", "2001:4860:4860::8888"] {
            #expect(!refused(text), "\(text)")
        }
        #expect(refused("fc00::1"))
        let imgproxyLocalUse: [UInt8] = [0x64, 0xff, 0x9b, 0x01, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(!refused(address(imgproxyLocalUse)), "64ff:9b01::/48 is no NAT64 prefix")
    }

    /// `fetcher/transport/generichttp/generic_http_test.go`, `TestVerifySourceNetwork`, on the
    /// server's policy: loopback allowed only when switched on (`IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES`),
    /// link-local and private addresses always refused here, so the rows that allow those (with
    /// `IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES` or `..._PRIVATE_...`, not supported) do not
    /// hold; every other row does. `8.8.8.8:8080` is judged by its address, as the guard sees it.
    @Test(
        "TestVerifySourceNetwork: the rows the server's switches can express",
        arguments: [
            ("127.0.0.1", false, true), ("127.0.0.1", true, false), ("0.0.0.0", false, true), ("169.254.0.1", true, true),
            ("192.168.0.1", true, true), ("8.8.8.8", false, false), ("8.8.8.8:8080", false, false), ("100.64.0.1", true, true),
            ("::10.0.0.1", true, true), ("2002:c0a8:0101::", true, true), ("64:ff9b::172.16.0.1", true, true),
            ("64:ff9b::100.64.0.1", true, true), ("::8.8.8.8", false, false), ("64:ff9b::8.8.8.8", false, false),
        ])
    func verifySourceNetwork(address: String, allowsLoopback: Bool, refusedThere: Bool) throws {
        var policy = ImageServerConfiguration().sourceAddressPolicy
        if allowsLoopback { policy.allowedNetworks += ["127.0.0.0/8", "::1/128"].compactMap { IPNetwork($0) } }
        let host = address.hasSuffix(":8080") ? String(address.dropLast(5)) : address
        let decision = policy.decision(for: try #require(IPAddress(host)))
        if case .refuse = decision { #expect(refusedThere) } else { #expect(!refusedThere) }
        #expect(IPAddress("not-an-ip") == nil, "Invalid IP address: never an address to connect to")
    }
}
