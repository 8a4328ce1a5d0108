import CTurboJPEG
import VitrineCore

/// Owns one TurboJPEG decompressor handle; not shared between threads (TurboJPEG handles are not thread-safe).
final class TurboJPEGDecompressor {
    struct ScaleFactor: Equatable, CustomStringConvertible {
        var numerator: Int
        var denominator: Int

        var value: Double { Double(numerator) / Double(denominator) }
        var description: String { "\(numerator)/\(denominator)" }
    }

    private let handle: tjhandle

    init() {
        // tjInitDecompress fails only when malloc does; there is nothing a photo frame could do instead.
        guard let handle = tjInitDecompress() else { preconditionFailure("tjInitDecompress: out of memory") }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// The reductions libjpeg-turbo can do inside its inverse DCT (M/8), smallest first.
    static let reductions: [ScaleFactor] = {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return [ScaleFactor(numerator: 1, denominator: 1)] }
        return (0..<Int(count)).map { ScaleFactor(numerator: Int(factors[$0].num), denominator: Int(factors[$0].denom)) }
            .filter { $0.numerator <= $0.denominator }
            .sorted { $0.value < $1.value }
    }()

    static func scaled(_ size: Size, by factor: ScaleFactor) -> Size {
        let factor = tjscalingfactor(num: Int32(factor.numerator), denom: Int32(factor.denominator))
        return Size(
            width: Int(vitrine_tj_scaled(Int32(size.width), factor)),
            height: Int(vitrine_tj_scaled(Int32(size.height), factor)))
    }

    enum PixelLayout {
        case bgrx, cmyk

        var turboFormat: Int32 { self == .bgrx ? Int32(TJPF_BGRX.rawValue) : Int32(TJPF_CMYK.rawValue) }
    }

    /// Decodes `jpeg` at `scaledSize` (one of the `reductions` applied to the stored size) into `pixels`, four bytes
    /// per pixel. Returns libjpeg-turbo's message on failure; its warnings (corrupt or truncated data) count as
    /// failures, see the README's "Broken photos".
    func decode(_ jpeg: UnsafeRawBufferPointer, scaledSize: Size, layout: PixelLayout, into pixels: UnsafeMutablePointer<UInt8>)
        -> String?
    {
        guard let base = jpeg.baseAddress else { return "empty input" }
        let flags = VITRINE_TJFLAG_STOPONWARNING | VITRINE_TJFLAG_LIMITSCANS
        let result = tjDecompress2(
            handle, base.assumingMemoryBound(to: UInt8.self), UInt(jpeg.count), pixels, Int32(scaledSize.width),
            Int32(scaledSize.width * 4), Int32(scaledSize.height), layout.turboFormat, flags)
        guard result != 0 else { return nil }
        guard let message = tjGetErrorStr2(handle) else { return "unknown libjpeg-turbo error" }
        return String(cString: message)
    }
}
