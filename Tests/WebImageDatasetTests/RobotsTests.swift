import Foundation
import Testing
import WebImage
import WebImageTestSupport

@testable import WebImageDataset

/// `X-Robots-Tag` as img2dataset's `is_disallowed` reads it.
@Suite("X-Robots-Tag opt-outs")
struct RobotsTagTests {
    let tag = RobotsTag(disallowed: ["noai", "noimageai", "noindex", "noimageindex"], token: "mybot")

    @Test("directives, case and spaces; a user agent's form counts only for our token; every header value counts")
    func directives() {
        #expect(tag.refuses(value: "noai"))
        #expect(tag.refuses(value: "nofollow, NoImageAI"))
        #expect(!tag.refuses(value: "nofollow, noarchive"))
        #expect(tag.refuses(value: "MyBot: noindex"))
        #expect(!tag.refuses(value: "otherbot: noindex"))
        #expect(!tag.refuses(value: " mybot: noindex"), "img2dataset compares the agent as written, lower-cased, not trimmed")
        func kept(_ values: [String]) -> DiskCacheMetadata {
            var metadata = DiskCacheMetadata()
            metadata.retainedHeaders[RobotsTag.headerName] = values
            return metadata
        }
        #expect(tag.refuses(kept(["nofollow", "otherbot: noai, noindex", "noimageindex"])))
        #expect(!tag.refuses(kept(["nofollow", "otherbot: noai"])))
        #expect(!tag.refuses(nil) && !tag.refuses(DiskCacheMetadata()), "nothing kept: nothing refuses")
        #expect(!RobotsTag(disallowed: [], token: nil).refuses(kept(["noai"])), "an empty list refuses nothing")
        #expect(!RobotsTag(disallowed: ["noai"], token: nil).refuses(value: "mybot: noai"), "without a token, a named agent is another one")
    }
}

/// `robots.txt` as RFC 9309 reads it (sections 2.1 to 2.2.3 and 5.1's examples).
@Suite("robots.txt rules")
struct RobotsRulesTests {
    @Test("the group of our product token (case-insensitive, groups merged), else *; longest match wins, allow on a tie")
    func groups() {
        let text = """
            # comment
            User-Agent: MyBot
            Disallow: /private/
            Allow: /private/open
            Crawl-delay: 2.5

            user-agent: otherbot
            disallow: /

            User-agent: mybot
            Disallow: /tmp

            User-agent: *
            Disallow: /
            """
        let rules = RobotsRules.parse(text, agent: "mybot")
        #expect(rules.crawlDelay == 2.5)
        #expect(!rules.allows("/private/x.jpg") && rules.allows("/private/open/x.jpg") && !rules.allows("/tmp/a"))
        #expect(rules.allows("/public/a.jpg"), "the * group does not apply to a crawler with its own group")
        let others = RobotsRules.parse(text, agent: "somebody")
        #expect(!others.allows("/public/a.jpg") && others.allows("/robots.txt"))
        let tie = RobotsRules.parse("User-agent: *\nDisallow: /page\nAllow: /page\n", agent: "x")
        #expect(tie.allows("/page"), "the least restrictive of equally long rules")
        #expect(RobotsRules.parse("User-agent: *\nDisallow:\n", agent: "x").allows("/anything"), "an empty disallow is no rule")
        #expect(RobotsRules.parse("", agent: "x") == .allowAll)
    }

    @Test("* matches any run of characters and a final $ the end")
    func wildcards() {
        #expect(RobotsRules.matches("/*.jpg$", "/a/b.jpg") && !RobotsRules.matches("/*.jpg$", "/a/b.jpg?x=1"))
        #expect(RobotsRules.matches("/*.jpg", "/a/b.jpg?x=1"), "without $ a pattern matches a prefix")
        #expect(RobotsRules.matches("/a*b*c", "/axxbyyc/more") && !RobotsRules.matches("/a*b*c", "/axxbyy"))
        #expect(RobotsRules.matches("/", "/x") && !RobotsRules.matches("/x$", "/xy"))
        #expect(RobotsRules.matches("*", "/") && RobotsRules.matches("/**/x", "/a/x"))
        let rules = RobotsRules.parse("User-agent: *\nDisallow: /*.gif$\nAllow: /$\nDisallow: /\n", agent: "x")
        #expect(rules.allows("/") && !rules.allows("/a.gif") && !rules.allows("/page"))
    }
}

/// Issue 57: a robots.txt built to stall the crawl.
@Suite("robots.txt against a hostile host")
struct RobotsHostileTests {
    @Test("robots.txt: the linear matcher agrees with a backtracking reference; a path past the line limit is refused by a host with rules")
    func robotsMatching() {
        var random = SplitMix64(seed: 57)
        let alphabet = Array("ab/*$")
        for _ in 0..<4000 {
            let pattern =
                "/" + String((0..<Int(random.next() % 7)).map { _ in alphabet[Int(random.next() % 4)] })
                + (random.next() % 4 == 0 ? "$" : "")
            let path = "/" + String((0..<Int(random.next() % 9)).map { _ in alphabet[Int(random.next() % 3)] })
            #expect(RobotsRules.matches(pattern, path) == Self.reference(pattern, path), "\(pattern) \(path)")
        }
        // A hostile host's shape: long wildcard rules against a long path (87 s of one actor before).
        let hostile = RobotsRules.parse(
            "User-agent: *\n" + (0..<8).map { _ in "Disallow: /" + String(repeating: "*a", count: 2000) + "b\n" }.joined(), agent: "x")
        #expect(hostile.allows("/" + String(repeating: "a", count: 16_000)), "no b: no rule matches")
        #expect(!hostile.allows("/" + String(repeating: "a", count: 100_000)), "over the line limit: refused")
        #expect(RobotsRules.parse("", agent: "x").allows("/" + String(repeating: "a", count: 100_000)), "no rules: nothing to judge")
    }

    /// RFC 9309's matching by backtracking, the obvious way: the reference the linear matcher is checked against.
    static func reference(_ pattern: String, _ path: String) -> Bool {
        var pattern = Array(pattern.utf8)
        let anchored = pattern.last == UInt8(ascii: "$")
        if anchored { pattern.removeLast() }
        let text = Array(path.utf8)
        func match(_ p: Int, _ t: Int) -> Bool {
            if p == pattern.count { return !anchored || t == text.count }
            if pattern[p] == UInt8(ascii: "*") { return (t...text.count).contains { match(p + 1, $0) } }
            return t < text.count && pattern[p] == text[t] && match(p + 1, t + 1)
        }
        return match(0, 0)
    }

}
