import Testing
import WebImageCaching
import WebImageTestSupport

@Suite("CacheKey")
struct CacheKeyTests {
    @Test("the original's string form is the original key")
    func original() {
        #expect(CacheKey("https://x.com/a.png").stringValue == "https://x.com/a.png")
        #expect(!CacheKey("https://x.com/a.png").isVariant)
    }

    @Test("the documented string form of each variant part")
    func documentedForm() {
        let key = CacheKey("https://x.com/a.png", thumbnail: .init(width: 300, height: 200), transformerKey: "round:16", scale: 2)
        #expect(key.stringValue == "https://x.com/a.png{thumbnail:300x200:fit}{transform:round:16}{scale:2.0}")
        #expect(CacheKey("u", thumbnail: .init(width: 1, height: 2, preservesAspectRatio: false)).stringValue == "u{thumbnail:1x2:fill}")
        #expect(CacheKey("a{b}").stringValue == "a{{b}}")
        #expect(key.isVariant)
        #expect(key.originalKey == CacheKey("https://x.com/a.png"))
    }

    @Test("an original that looks like a variant does not collide with it")
    func lookalikes() {
        let variant = CacheKey("u", transformerKey: "t")
        let lookalike = CacheKey("u{transform:t}")
        #expect(variant.stringValue != lookalike.stringValue)
    }

    @Test("10,000 random keys: distinct keys have distinct string forms, equal keys equal ones")
    func propertyNoCollisions() {
        // A tiny alphabet full of the escape characters makes near-collisions as likely as possible.
        let alphabet = Array("{}:x1")
        var generator = SplitMix64(seed: 42)
        func randomText() -> String {
            String((0..<Int(generator.next() % 6)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        }
        var seen: [String: CacheKey] = [:]
        for _ in 0..<10_000 {
            let thumbnail =
                generator.next() % 3 == 0
                ? ThumbnailSize(
                    width: Int(generator.next() % 3), height: Int(generator.next() % 3), preservesAspectRatio: generator.next() % 2 == 0)
                : nil
            let key = CacheKey(
                randomText(),
                thumbnail: thumbnail,
                transformerKey: generator.next() % 2 == 0 ? randomText() : nil,
                scale: generator.next() % 3 == 0 ? Double(generator.next() % 3) : nil
            )
            if let earlier = seen[key.stringValue] {
                #expect(earlier == key, "\(earlier) and \(key) share \(key.stringValue)")
            }
            seen[key.stringValue] = key
            #expect(
                CacheKey(key.original, thumbnail: key.thumbnail, transformerKey: key.transformerKey, scale: key.scale).stringValue
                    == key.stringValue)
        }
        #expect(seen.count > 2000, "the generator must produce many distinct keys")
    }
}
