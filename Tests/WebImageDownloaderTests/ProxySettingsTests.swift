import Foundation
import Testing
@testable import WebImageDownloader
import WebImageTestSupport

/// The proxy variables as curl reads them, and the no-proxy list; values only.
@Suite("ProxySettings")
struct ProxySettingsTests {
    let http = URL(string: "http://img.example.com/a.png")!
    let https = URL(string: "https://img.example.com/a.png")!

    @Test("each scheme has its variable, all_proxy fills in, lower case wins, a bare host:port is an HTTP proxy")
    func environment() throws {
        #expect(ProxySettings.fromEnvironment([:]) == nil)
        let both = try #require(ProxySettings.fromEnvironment(["http_proxy": "proxy:3128", "HTTPS_PROXY": "http://secure:8443"]))
        #expect(both.proxy(for: http) == URL(string: "http://proxy:3128"))
        #expect(both.proxy(for: https) == URL(string: "http://secure:8443"))
        let all = try #require(ProxySettings.fromEnvironment(["ALL_PROXY": "socks5://socks:1080", "https_proxy": "http://s:1"]))
        #expect(all.proxy(for: http) == URL(string: "socks5://socks:1080"))
        #expect(all.proxy(for: https) == URL(string: "http://s:1"))
        let cases = try #require(ProxySettings.fromEnvironment(["http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:1"]))
        #expect(cases.proxy(for: http) == URL(string: "http://lower:1"))
        #expect(ProxySettings.fromEnvironment(["HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"]) == nil, "httpoxy: ignored under CGI")
        #expect(ProxySettings.fromEnvironment(["http_proxy": "http://p:1", "REQUEST_METHOD": "GET"]) != nil)
        #expect(ProxySettings.fromEnvironment(["http_proxy": "  "]) == nil, "a blank variable is unset")
    }

    @Test(
        "no_proxy matches names and their subdomains, addresses and blocks, or everything",
        arguments: [
            ("example.com", "img.example.com", true), (".example.com", "img.example.com", true), ("example.com", "example.com", true),
            ("example.com", "badexample.com", false), ("img.example.com", "example.com", false), ("*", "anything.test", true),
            ("10.0.0.0/8", "10.1.2.3", true), ("10.0.0.0/8", "11.1.2.3", false), ("127.0.0.1", "127.0.0.1", true),
            ("::1", "[::1]", true), ("LOCALHOST", "localhost", true),
        ])
    func noProxy(entry: String, host: String, bypassed: Bool) {
        #expect(ProxySettings(httpProxy: URL(string: "http://p:1"), noProxy: [entry]).bypasses(host) == bypassed)
    }

    @Test("a bypassed host goes direct; the environment's list is split on commas")
    func bypass() throws {
        let settings = try #require(
            ProxySettings.fromEnvironment(["https_proxy": "http://p:1", "NO_PROXY": "internal.test, .corp.example"]))
        #expect(settings.noProxy == ["internal.test", ".corp.example"])
        #expect(settings.proxy(for: URL(string: "https://a.corp.example/x.png")!) == nil)
        #expect(settings.proxy(for: URL(string: "https://internal.test/x.png")!) == nil)
        #expect(settings.proxy(for: https) == URL(string: "http://p:1"))
        #expect(settings.proxy(for: http) == nil, "no proxy for http: without http_proxy or all_proxy")
    }
}
