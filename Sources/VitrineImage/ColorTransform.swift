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
    }

    deinit { cmsDeleteTransform(transform) }

    func apply(_ row: UnsafeMutablePointer<UInt8>, pixelCount: Int) {
        cmsDoTransform(transform, row, row, UInt32(pixelCount))
    }
}
