#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The reconstruction filters the resampler offers. Their support widens with the reduction ratio, so a big
/// reduction averages every source pixel it covers (area-like) instead of skipping pixels as nearest-neighbour
/// or plain bilinear would.
public enum ResamplingFilter: String, Sendable, CaseIterable {
    /// Tent filter: the cheapest that does not alias.
    case triangle
    /// Catmull-Rom cubic (a = -0.5), as Pillow's BICUBIC.
    case cubic
    /// Lanczos with three lobes, as Pillow's LANCZOS.
    case lanczos3

    var support: Double {
        switch self {
        case .triangle: return 1
        case .cubic: return 2
        case .lanczos3: return 3
        }
    }

    func weight(_ x: Double) -> Double {
        let distance = abs(x)
        switch self {
        case .triangle:
            return max(0, 1 - distance)
        case .cubic:
            let a = -0.5
            if distance < 1 { return ((a + 2) * distance - (a + 3)) * distance * distance + 1 }
            if distance < 2 { return (((distance - 5) * distance + 8) * distance - 4) * a }
            return 0
        case .lanczos3:
            guard distance < 3 else { return 0 }
            return Self.sinc(distance) * Self.sinc(distance / 3)
        }
    }

    private static func sinc(_ x: Double) -> Double {
        if x == 0 { return 1 }
        let angle = x * Double.pi
        return sin(angle) / angle
    }
}
