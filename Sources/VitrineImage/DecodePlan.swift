import VitrineCore

/// Everything decided about a photo before a byte of it is decoded: the reduction while decoding (a JPEG's DCT
/// scale, a WebP's scaled decode), the buffers and what they cost, and where the pixels go.
public struct DecodePlan: Sendable, Equatable {
    public var header: ImageHeader
    public var placement: Placement
    /// libjpeg-turbo's inverse-DCT reduction, `numerator/8`, or a HEIF grid's (8/8 for formats decoded at full size
    /// or to a size).
    public var scaleNumerator: Int
    public var scaleDenominator: Int
    /// The size the decoder delivers (stored orientation).
    public var decodedSize: Size
    /// The shown part of the decoded image, in its pixels (stored orientation).
    public var decodedWindow: Placement.Window
    /// The resampler's output size (stored orientation; the placement's destination after undoing orientation).
    public var outputSize: Size
    /// The ring of decoded rows between the decoding and the resampling thread.
    public var rowBufferBytes: Int
    /// The resampler's float rows and filter tables.
    public var resamplerBytes: Int
    public var decoderWorkspaceBytes: Int

    /// Rows held between the decoding and the resampling thread; more only smooths out their pace.
    static let pipeRows = 32

    /// The memory the decode itself needs (the frame is charged on its own).
    public var decodeBytes: Int { rowBufferBytes + resamplerBytes + decoderWorkspaceBytes }

    /// The reduction as a fraction in lowest terms (`1/2`, `3/8`), as tjbench's `-scale` takes it; for a WebP the
    /// size it is decoded to.
    public var scaleDescription: String {
        if header.format == .webp { return decodedSize == header.size ? "1/1" : "\(decodedSize)" }
        var (a, b) = (scaleNumerator, scaleDenominator)
        while b != 0 { (a, b) = (b, a % b) }
        return "\(scaleNumerator / max(a, 1))/\(scaleDenominator / max(a, 1))"
    }

    /// Chooses the smallest DCT reduction whose output still has at least as many pixels as the box the photo fills,
    /// in both directions. libjpeg-turbo's scaled inverse DCT is itself a proper low-pass reduction, so rounding up
    /// to the next eighth is all the headroom the final filter needs; libvips' habit of decoding at twice the target
    /// would double or quadruple the decode cost for no visible gain at panel sizes.
    ///
    /// A PNG is decoded at full size, row by row; a WebP straight to the size the box needs (libwebp's scaled
    /// decode), except an animation's first frame, which is composed at its canvas size.
    public static func make(header: ImageHeader, options: RenderOptions) -> DecodePlan {
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
        var numerator = 8
        var decoded = header.size
        var decoderBytes = header.decoderWorkspaceBytes
        switch header.details {
        case .jpeg:
            numerator = (1...8).first { Double($0) / 8 >= needed - 1e-9 } ?? 8
            decoded = scaled(header.size, numerator: numerator)
        case .webp(let webp) where webp.decodesRowByRow:
            break
        case .webp(let webp):
            if !webp.animated && needed < 1 {
                decoded = Size(
                    width: min(header.size.width, Int((Double(header.size.width) * needed).rounded(.up))),
                    height: min(header.size.height, Int((Double(header.size.height) * needed).rounded(.up))))
            }
            // libwebp writes the whole decoded picture, which the rows are then taken from.
            decoderBytes += decoded.pixelCount * 4
        case .heif(let heif) where heif.grid != nil:
            // A grid reduces by 2, 4 or 8 as its tiles are copied into the band: the smallest reduction whose
            // output still covers the box, as for a JPEG.
            let reduction = heif.reductions.last { 1 / Double($0) >= needed - 1e-9 } ?? 1
            numerator = 8 / reduction
            decoded = scaled(header.size, numerator: numerator)
            decoderBytes = heif.decoderWorkspaceBytes(reduction: reduction)
        case .clip(let clip):
            // libswscale scales the first picture straight to what the box needs; the picture the decoder holds and
            // the scaled copy are what the still costs.
            if needed < 1 {
                decoded = Size(
                    width: min(header.size.width, Int((Double(header.size.width) * needed).rounded(.up))),
                    height: min(header.size.height, Int((Double(header.size.height) * needed).rounded(.up))))
            }
            decoderBytes = clip.size.pixelCount * 3 / 2 * (clip.bitDepth > 8 ? 2 : 1) * 2 + decoded.pixelCount * 4
        case .png, .heif:
            break
        }
        let ratioX = Double(decoded.width) / Double(header.size.width)
        let ratioY = Double(decoded.height) / Double(header.size.height)
        let decodedWindow = Placement.Window(
            x: window.x * ratioX, y: window.y * ratioY,
            width: min(Double(decoded.width), window.width * ratioX),
            height: min(Double(decoded.height), window.height * ratioY))
        return DecodePlan(
            header: header, placement: placement, scaleNumerator: numerator, scaleDenominator: 8,
            decodedSize: decoded, decodedWindow: decodedWindow, outputSize: output,
            rowBufferBytes: RowPipe.byteCount(rowBytes: decoded.width * 4, capacity: pipeRows),
            resamplerBytes: Resampler.workspaceBytes(
                sourceWidth: decoded.width, window: decodedWindow, outputSize: output, filter: options.filter),
            decoderWorkspaceBytes: decoderBytes)
    }

    /// libjpeg's output size at `numerator`/8: each side rounded up (`jdiv_round_up`).
    static func scaled(_ size: Size, numerator: Int) -> Size {
        Size(width: (size.width * numerator + 7) / 8, height: (size.height * numerator + 7) / 8)
    }
}
