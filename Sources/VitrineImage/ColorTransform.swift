import CLCMS
import VitrineCore

/// A LittleCMS transform from a photo's colour space to sRGB on BGRX rows, in place. Owns the transform.
final class ColorTransform {
    private let transform: cmsHTRANSFORM

    /// Nil when LittleCMS cannot read the profile or it is not an RGB space (a grey or CMYK profile: those photos
    /// are shown as decoded).
    init?(_ profile: ColorProfile) {
        let made: cmsHTRANSFORM?
        switch profile {
        case .icc(let bytes):
            made = bytes.withUnsafeBytes { vitrine_cms_transform_from_icc($0.baseAddress, $0.count) }
        case .primaries(let xy, let curveType, let curve):
            var parameters = curve + [Double](repeating: 0, count: max(0, 7 - curve.count))
            made = xy.withUnsafeBufferPointer { points in
                parameters.withUnsafeMutableBufferPointer { values in
                    vitrine_cms_transform_from_primaries(points.baseAddress, curveType, values.baseAddress)
                }
            }
        }
        guard let made else { return nil }
        transform = made
        isIdentity = Self.changesNothing(made)
    }

    /// True when the transform moves no channel of any probe colour by more than one level: the photo declares
    /// sRGB, as most phone JPEGs and the PNGs made from them do. Its rows are then shown as decoded, sparing the
    /// decoding thread LittleCMS's pass (a tenth of a PNG decode).
    let isIdentity: Bool

    private static func changesNothing(_ transform: cmsHTRANSFORM) -> Bool {
        let levels: [UInt8] = [0, 1, 3, 8, 16, 32, 50, 64, 90, 128, 160, 192, 224, 240, 254, 255]
        var probe: [UInt8] = []
        for red in levels {
            for green in levels {
                for blue in levels { probe += [blue, green, red, 0] }
            }
        }
        for level in 0...255 {
            let value = UInt8(level)
            probe += [value, 0, 0, 0, 0, value, 0, 0, 0, 0, value, 0, value, value, value, 0]
        }
        var converted = probe
        let pixels = UInt32(probe.count / 4)
        cmsDoTransform(transform, probe, &converted, pixels)
        return zip(probe, converted).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }

    deinit { cmsDeleteTransform(transform) }

    func apply(_ row: UnsafeMutablePointer<UInt8>, pixelCount: Int) {
        cmsDoTransform(transform, row, row, UInt32(pixelCount))
    }
}
