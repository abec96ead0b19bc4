public import Foundation

/// Deterministic test bytes: entry `index` has its own size (500 to 20,499 bytes) and content,
/// so a test and a child process agree on what was written without sharing memory.
public enum TestPayload {
    public static func bytes(_ index: Int) -> Data {
        let count = 500 + (index * 7919) % 20_000
        return Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
    }
}
