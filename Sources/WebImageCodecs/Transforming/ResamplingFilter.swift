import Foundation

/// The kernel a resize samples with.
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable {
    /// Lanczos with three lobes: the sharpest, the default (Pillow's `LANCZOS`).
    case lanczos3
    /// Lanczos with two lobes: a little softer than three, with less ringing (libvips' `lanczos2`).
    case lanczos2
    /// Catmull-Rom cubic (Keys' kernel with a = -0.5, libvips' `cubic` and Pillow's `BICUBIC`).
    case bicubic
    /// Linear interpolation (a triangle kernel widened when shrinking, like Pillow's `BILINEAR`).
    case bilinear
    /// The nearest source pixel: no new colours, fastest.
    case nearest

    /// How far from its centre the kernel reaches, in source pixels at scale 1.
    var support: Double {
        switch self {
        case .lanczos3: 3
        case .lanczos2, .bicubic: 2
        case .bilinear: 1
        case .nearest: 0.5
        }
    }

    /// The kernel's weight at distance `x`.
    func weight(_ x: Double) -> Double {
        switch self {
        case .lanczos3:
            guard x != 0 else { return 1 }
            guard abs(x) < 3 else { return 0 }
            return Self.sinc(x) * Self.sinc(x / 3)
        case .lanczos2:
            guard x != 0 else { return 1 }
            guard abs(x) < 2 else { return 0 }
            return Self.sinc(x) * Self.sinc(x / 2)
        case .bicubic:
            let distance = abs(x)
            if distance < 1 { return (1.5 * distance - 2.5) * distance * distance + 1 }
            if distance < 2 { return ((-0.5 * distance + 2.5) * distance - 4) * distance + 2 }
            return 0
        case .bilinear:
            return max(0, 1 - abs(x))
        case .nearest:
            return (-0.5..<0.5).contains(x) ? 1 : 0
        }
    }

    private static func sinc(_ x: Double) -> Double {
        let angle = Double.pi * x
        return sin(angle) / angle
    }
}
