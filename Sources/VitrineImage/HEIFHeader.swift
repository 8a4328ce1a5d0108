import VitrineCore

/// What Vitrine needs to know about a HEIF (HEIC) or AVIF photo before decoding it, as libheif reads it from the
/// file's boxes: the primary image's size with the HEIF transforms applied (libheif rotates, mirrors and crops as
/// irot, imir and clap say, and those win over any EXIF orientation, as the HEIF specification has it), alpha,
/// bit depth, a colour profile, and from EXIF the capture date.
public struct HEIFHeader: Equatable, Sendable {
    /// The shown size, transforms applied.
    public var size: Size
    public var avif: Bool
    public var hasAlpha: Bool
    public var bitDepth: Int
    public var hasColorProfile: Bool
    public var exif: ExifReader.Fields?

    /// Bytes libheif holds while decoding: it decodes the whole image (a phone's grid of tiles is pasted into one
    /// picture) as YUV, then converts it to interleaved 8-bit RGB(A); more than 8 bits a sample also passes
    /// through 16-bit planes. The codec's own state comes on top.
    public var decoderWorkspaceBytes: Int {
        let pixels = size.pixelCount
        let sampleBytes = bitDepth > 8 ? 2 : 1
        var bytes = Int.saturatingSum(
            Int.saturatingProduct(pixels, 3, sampleBytes) / 2, pixels.saturatingTimes(hasAlpha ? 4 : 3))
        if hasAlpha { bytes = bytes.saturatingPlus(pixels.saturatingTimes(sampleBytes)) }
        if bitDepth > 8 { bytes = bytes.saturatingPlus(pixels.saturatingTimes(hasAlpha ? 8 : 6)) }
        return bytes.saturatingPlus(16 << 20)
    }
}
