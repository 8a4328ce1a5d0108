import VitrineCore

/// The colour space a photo says its pixels are in: an embedded ICC profile (JPEG APP2, PNG iCCP, WebP ICCP, HEIF
/// colr/prof), or for HEIF and AVIF an nclx description (primaries and transfer curve by code). Untagged photos
/// are sRGB, and so are nclx descriptions of BT.709 primaries with an sRGB or BT.709 curve: neither needs a
/// transform.
public enum ColorProfile: Hashable, Sendable {
    case icc([UInt8])
    /// Red, green, blue and white CIE xy (eight numbers) and an ICC parametric curve (type and parameters).
    case primaries(xy: [Double], curveType: Int32, curve: [Double])

    /// The nclx description as a profile, or nil when it is sRGB already or cannot be shown faithfully (PQ and HLG
    /// are HDR curves an 8-bit sRGB panel has no room for; their numbers are shown as they are).
    public static func nclx(primaries: Int, transfer: Int, xy: [Double]) -> ColorProfile? {
        // H.273 transfer characteristics: 1, 6, 14, 15 are BT.709's curve; 13 is sRGB's; 4 and 5 plain gammas; 8
        // linear; 2 unspecified (taken as sRGB).
        let curve: (Int32, [Double])
        switch transfer {
        case 13, 2: curve = (4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])
        case 1, 6, 14, 15: curve = (4, [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081])
        case 4: curve = (1, [2.2])
        case 5: curve = (1, [2.8])
        case 8: curve = (1, [1])
        default: return nil
        }
        // H.273 colour primaries 1 is BT.709 (sRGB's), 2 unspecified.
        if primaries == 1 || primaries == 2, transfer == 13 || transfer == 2 || [1, 6, 14, 15].contains(transfer) {
            return nil
        }
        guard xy.count == 8, xy.allSatisfy({ $0 > 0 && $0 < 1 }) else { return nil }
        return .primaries(xy: xy, curveType: curve.0, curve: curve.1)
    }
}
