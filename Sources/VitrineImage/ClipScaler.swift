import CFFmpeg
import VitrineCore

/// libswscale from a decoded picture (any of the decoders' Y'CbCr formats, 8 or 10 bits) to BGRX rows of another
/// size, with a real filter: bicubic, in the colour matrix and range the clip declares. Not with chroma
/// interpolated at full resolution nor accurate rounding: they triple the cost (4.4 ms against 1.6 ms a 720p
/// picture here) for differences under a level, and a Pi has no time to spare at 30 pictures a second. The context is made again only when the picture's format or size changes (a stream may change
/// mid-clip). One thread uses it.
final class ClipScaler {
    private var scaler: OpaquePointer?
    private var made: (source: Size, format: Int32, target: Size)?

    deinit { sws_freeContext(scaler) }

    /// Scales `frame` into `target`, `target.height` rows of `target.width` BGRX pixels, `stride` bytes apart.
    func scale(
        _ frame: UnsafeMutablePointer<AVFrame>, into pixels: UnsafeMutableRawPointer, target: Size, stride: Int
    ) -> Bool {
        let source = Size(width: Int(frame.pointee.width), height: Int(frame.pointee.height))
        guard source.width > 0, source.height > 0, target.width > 0, target.height > 0 else { return false }
        if made == nil || made?.source != source || made?.format != frame.pointee.format || made?.target != target {
            sws_freeContext(scaler)
            scaler = sws_getContext(
                Int32(source.width), Int32(source.height), AVPixelFormat(rawValue: frame.pointee.format),
                Int32(target.width), Int32(target.height), AV_PIX_FMT_BGR0,
                Int32(SWS_BICUBIC), nil, nil, nil)
            guard scaler != nil else {
                made = nil
                return false
            }
            vitrine_sws_describe(scaler, frame)
            made = (source, frame.pointee.format, target)
        }
        let rows = vitrine_sws_scale_packed(scaler, frame, pixels.assumingMemoryBound(to: UInt8.self), Int32(stride))
        return rows == Int32(target.height)
    }
}
