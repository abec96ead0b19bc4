import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport

/// Truncated and garbled copies of a fixture, each decoded through the shared coders: a decode
/// either works or throws a ``WebImageError`` (the typed throw guarantees the kind); what this
/// checks is that none crashes or hangs.
enum DamagedCopies {
    /// Decodes `cuts` prefixes of `data` and `garbles` copies with `bytes` random bytes changed.
    /// Returns how many prefixes failed.
    @discardableResult
    static func decode(_ data: Data, cuts: Int, garbles: Int, bytes: Int) -> Int {
        var failedPrefixes = 0
        for end in stride(from: 0, to: data.count, by: max(1, data.count / cuts)) {
            do { _ = try CodersManager.shared.decode(data.prefix(end)) } catch { failedPrefixes += 1 }
        }
        // Seeded, so that every run decodes the same copies and a failure names its input: the
        // system's generator once found a libheif crash 1 run in 10-40 that no single file
        // reproduced (``HEIFItemProperties`` now refuses what caused it).
        var generator = SplitMix64(seed: UInt64(data.count))
        for _ in 0..<garbles {
            var garbled = data
            for _ in 0..<bytes {
                garbled[Int.random(in: 0..<garbled.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            do { _ = try CodersManager.shared.decode(garbled) } catch {}
        }
        return failedPrefixes
    }

    /// Runs `read`, a container parser, over every `cutStep`-th prefix of `bytes`, then over
    /// `rounds` copies with `changes` bytes changed within `span`, the same ones every run: what
    /// this checks is that none crashes.
    static func parse(
        _ bytes: [UInt8], cutStep: Int, rounds: Int, changes: Int, within span: Range<Int>, _ read: (UnsafeRawBufferPointer) -> Void
    ) {
        for length in stride(from: 0, to: bytes.count, by: cutStep) {
            bytes.withUnsafeBytes { read(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
        }
        for round in 0..<rounds {
            var garbled = bytes
            for change in 1...changes {
                garbled[span.lowerBound + (round * 7919 * change + change * 13) % span.count] =
                    UInt8(truncatingIfNeeded: round * 31 + change * 101)
            }
            garbled.withUnsafeBytes(read)
        }
    }
}
