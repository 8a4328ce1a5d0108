import CFFmpeg
import VitrineCore

/// libswscale from a decoded picture (any of the decoders' Y'CbCr formats, 8 or 10 bits) to BGRX rows of another
/// size, with a real filter: bicubic, in the colour matrix and range the clip declares. Not with chroma
/// interpolated at full resolution nor accurate rounding: they triple the cost (4.4 ms against 1.6 ms a 720p
/// picture here) for differences under a level, and a Pi has no time to spare at 30 pictures a second. The context is made again only when the picture's format or size changes (a stream may change
/// mid-clip). One thread uses it.
/// For a plane that converts colours itself (`Frame.Layout.nv12`) it scales into NV12 instead, keeping the clip's
/// matrix and range: the plane is told them (`encoding(of:)`).
final class ClipScaler {
    private var scaler: OpaquePointer?
    private var made: (source: Size, format: Int32, target: Size, layout: Frame.Layout)?

    deinit { sws_freeContext(scaler) }

    /// The matrix and range a picture's values are in, as `vitrine_sws_describe` reads them for the RGB path.
    static func encoding(of frame: UnsafeMutablePointer<AVFrame>) -> YCbCrEncoding {
        let matrix: YCbCrEncoding.Matrix
        switch vitrine_sws_matrix(frame) {
        case VITRINE_SWS_CS_ITU709: matrix = .bt709
        case VITRINE_SWS_CS_BT2020: matrix = .bt2020
        default: matrix = .bt601
        }
        return YCbCrEncoding(matrix: matrix, fullRange: vitrine_av_full_range(frame) != 0)
    }

    static func swsMatrix(_ matrix: YCbCrEncoding.Matrix) -> Int32 {
        switch matrix {
        case .bt601: return VITRINE_SWS_CS_ITU601
        case .bt709: return VITRINE_SWS_CS_ITU709
        case .bt2020: return VITRINE_SWS_CS_BT2020
        }
    }

    /// Scales `frame` into NV12 planes of `target`: Y' rows at `luma`, CbCr rows at `chroma`, `stride` bytes apart.
    func scaleNV12(
        _ frame: UnsafeMutablePointer<AVFrame>, luma: UnsafeMutablePointer<UInt8>,
        chroma: UnsafeMutablePointer<UInt8>, target: Size, stride: Int
    ) -> Bool {
        guard prepare(frame, target: target, layout: .nv12) else { return false }
        return vitrine_sws_scale_nv12(scaler, frame, luma, chroma, Int32(stride)) == Int32(target.height)
    }

    private func prepare(_ frame: UnsafeMutablePointer<AVFrame>, target: Size, layout: Frame.Layout) -> Bool {
        let source = Size(width: Int(frame.pointee.width), height: Int(frame.pointee.height))
        guard source.width > 0, source.height > 0, target.width > 0, target.height > 0 else { return false }
        if let made, made.source == source, made.format == frame.pointee.format, made.target == target,
            made.layout == layout
        {
            return true
        }
        sws_freeContext(scaler)
        scaler = sws_getContext(
            Int32(source.width), Int32(source.height), AVPixelFormat(rawValue: frame.pointee.format),
            Int32(target.width), Int32(target.height), layout == .nv12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_BGR0,
            Int32(SWS_BICUBIC), nil, nil, nil)
        guard scaler != nil else {
            made = nil
            return false
        }
        if layout == .nv12 {
            vitrine_sws_describe_yuv(scaler, frame, vitrine_sws_matrix(frame))
        } else {
            vitrine_sws_describe(scaler, frame)
        }
        made = (source, frame.pointee.format, target, layout)
        return true
    }

    /// Scales `frame` into `target`, `target.height` rows of `target.width` BGRX pixels, `stride` bytes apart.
    func scale(
        _ frame: UnsafeMutablePointer<AVFrame>, into pixels: UnsafeMutableRawPointer, target: Size, stride: Int
    ) -> Bool {
        guard prepare(frame, target: target, layout: .xrgb) else { return false }
        let rows = vitrine_sws_scale_packed(scaler, frame, pixels.assumingMemoryBound(to: UInt8.self), Int32(stride))
        return rows == Int32(target.height)
    }
}
