import CFFmpeg
import VitrineCore
import VitrinePlatform

/// Turns whole frames between XRGB and NV12 (libswscale, the same size, in a given matrix and range): a clip played
/// on a Y'CbCr plane starts from its poster's margins in NV12, and leaves (a fade, text drawn over it) from its last
/// picture in XRGB. Each call makes its own scaler: these happen once a clip, not once a picture.
public enum PlanarFrames {
    /// Fills the NV12 `target` from the XRGB `source` of the same size.
    public static func fill(_ target: Frame, from source: Frame, encoding: YCbCrEncoding) -> Bool {
        guard target.layout == .nv12, source.layout == .xrgb, target.size == source.size, loaded else { return false }
        return vitrine_sws_nv12_convert(
            Int32(source.size.width), Int32(source.size.height), 1, ClipScaler.swsMatrix(encoding.matrix),
            encoding.fullRange ? 1 : 0, UnsafeMutableRawPointer(source.pixels).assumingMemoryBound(to: UInt8.self),
            Int32(source.size.width * 4), target.luma, target.chroma, Int32(target.size.width)) == 0
    }

    /// Writes the NV12 `source` as XRGB rows at `pixels`, `pitch` bytes apart, in the frame's own encoding.
    public static func unpack(_ source: Frame, into pixels: UnsafeMutableRawPointer, pitch: Int) -> Bool {
        guard source.layout == .nv12 else { return false }
        return unpack(
            luma: source.luma, chroma: source.chroma, stride: source.size.width, size: source.size,
            encoding: source.encoding, into: pixels, pitch: pitch)
    }

    /// The same from NV12 planes anywhere (a scanout buffer's, `stride` bytes a row for both).
    public static func unpack(
        luma: UnsafeMutablePointer<UInt8>, chroma: UnsafeMutablePointer<UInt8>, stride: Int, size: Size,
        encoding: YCbCrEncoding, into pixels: UnsafeMutableRawPointer, pitch: Int
    ) -> Bool {
        guard loaded else { return false }
        return vitrine_sws_nv12_convert(
            Int32(size.width), Int32(size.height), 0, ClipScaler.swsMatrix(encoding.matrix), encoding.fullRange ? 1 : 0,
            pixels.assumingMemoryBound(to: UInt8.self), Int32(pitch), luma, chroma, Int32(stride)) == 0
    }

    /// libswscale, loaded when first needed. An NV12 frame exists only once a clip has loaded it (`ClipFile`), so on
    /// the player's loop this never opens a file.
    private static var loaded: Bool {
        if LazyLibrary.avutil.isLoaded && LazyLibrary.swscale.isLoaded { return true }
        return (try? LazyLibrary.avutil.load()) != nil && (try? LazyLibrary.swscale.load()) != nil
    }

    /// An XRGB copy of `frame` (itself copied when it is XRGB), charged to `budget`; nil when it does not fit or
    /// cannot be converted.
    public static func xrgbCopy(of frame: Frame, budget: MemoryBudget, purpose: String) -> Frame? {
        guard let copy = try? Frame(size: frame.size, budget: budget, purpose: purpose) else { return nil }
        switch frame.layout {
        case .xrgb:
            copy.pixels.update(from: frame.pixels, count: frame.size.pixelCount)
            return copy
        case .nv12:
            return unpack(frame, into: UnsafeMutableRawPointer(copy.pixels), pitch: frame.size.width * 4) ? copy : nil
        }
    }
}
