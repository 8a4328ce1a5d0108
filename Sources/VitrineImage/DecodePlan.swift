import VitrineCore

/// Everything decided about a photo before a byte of it is decoded: the DCT reduction, the buffers and what they
/// cost, and where the pixels go.
public struct DecodePlan: Sendable, Equatable {
    public var header: JPEGHeader
    public var placement: Placement
    /// libjpeg-turbo's reduction, `numerator/8`.
    public var scaleNumerator: Int
    public var scaleDenominator: Int
    /// The size libjpeg-turbo decodes to (stored orientation).
    public var decodedSize: Size
    /// The shown part of the decoded image, in its pixels (stored orientation).
    public var decodedWindow: Placement.Window
    /// The resampler's output size (stored orientation; the placement's destination after undoing orientation).
    public var outputSize: Size
    public var fileBytes: Int
    public var decodedBytes: Int
    public var decoderWorkspaceBytes: Int

    /// The memory the decode itself needs (the frame is charged on its own).
    public var decodeBytes: Int { fileBytes + decodedBytes + decoderWorkspaceBytes }

    public var scaleDescription: String { "\(scaleNumerator)/\(scaleDenominator)" }

    /// Chooses the smallest DCT reduction whose output still has at least as many pixels as the box the photo fills,
    /// in both directions. libjpeg-turbo's scaled inverse DCT is itself a proper low-pass reduction, so rounding up
    /// to the next eighth is all the headroom the final filter needs; libvips' habit of decoding at twice the target
    /// would double or quadruple the decode cost for no visible gain at panel sizes.
    public static func make(header: JPEGHeader, fileBytes: Int, options: RenderOptions) -> DecodePlan {
        let placement = Placement.compute(photo: header.displayedSize, canvas: options.canvas, fit: options.fit)
        let mapping = header.orientation.mapping
        let displayed = header.displayedSize
        var window = placement.window
        if mapping.mirrorX { window.x = Double(displayed.width) - window.x - window.width }
        if mapping.mirrorY { window.y = Double(displayed.height) - window.y - window.height }
        var output = placement.destination.size
        if mapping.transpose {
            window = Placement.Window(x: window.y, y: window.x, width: window.height, height: window.width)
            output = output.transposed
        }
        let needed = max(Double(output.width) / window.width, Double(output.height) / window.height)
        let factor =
            TurboJPEGDecompressor.reductions.first { $0.value >= needed - 1e-9 }
            ?? TurboJPEGDecompressor.ScaleFactor(numerator: 1, denominator: 1)
        let decoded = TurboJPEGDecompressor.scaled(header.size, by: factor)
        let ratioX = Double(decoded.width) / Double(header.size.width)
        let ratioY = Double(decoded.height) / Double(header.size.height)
        let decodedWindow = Placement.Window(
            x: window.x * ratioX, y: window.y * ratioY,
            width: min(Double(decoded.width), window.width * ratioX),
            height: min(Double(decoded.height), window.height * ratioY))
        return DecodePlan(
            header: header, placement: placement, scaleNumerator: factor.numerator,
            scaleDenominator: factor.denominator, decodedSize: decoded, decodedWindow: decodedWindow,
            outputSize: output, fileBytes: fileBytes, decodedBytes: decoded.xrgbByteCount ?? Int.max / 4,
            decoderWorkspaceBytes: header.decoderWorkspaceBytes)
    }
}
