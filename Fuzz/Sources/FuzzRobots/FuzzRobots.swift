import Foundation
import WebImageDataset

/// libFuzzer entry point for robots.txt: the input up to its first NUL is the file, the rest a
/// path to judge. Parsing and matching must end in a verdict in time linear in the two (a
/// backtracking matcher shows as a libFuzzer timeout); a trap is a finding. The same path is
/// judged with every pattern as a rule of its own too, so long wildcard runs meet long paths.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: bytes, count: count)
    let split = input.firstIndex(of: 0) ?? count
    let text = String(decoding: input[..<split], as: UTF8.self)
    let path = "/" + String(decoding: input[min(split + 1, count)...], as: UTF8.self)
    for agent in ["fuzzbot", "*"] {
        let rules = RobotsRules.parse(text, agent: agent)
        _ = rules.allows(path)
        for rule in rules.rules.prefix(64) { _ = RobotsRules.matches(rule.pattern, path) }
    }
    return 0
}
