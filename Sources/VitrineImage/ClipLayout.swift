import CFFmpeg
import VitrineCore

/// Where a clip's pictures go in the scanout frame, worked out once per clip: the box the picture fills (the same
/// placement a photo of its size gets, `DecodePlan`), the display matrix's turn and the panel's rotation as one
/// pixel mapping. Where the mapping is the identity and nothing is cropped (an upright clip, `contain`, a panel not
/// turned: the usual case), libswscale writes straight into the frame's box; otherwise it scales into a scratch
/// buffer, from which the box is copied through the mapping.
struct ClipLayout {
    let scanout: Size
    /// The box in stored orientation (what the scaler makes).
    let output: Size
    /// The whole picture scaled so that the window is `output`, and the window's origin in it.
    let scaled: Size
    let crop: (x: Int, y: Int)
    let mapping: PixelMapping
    /// Bytes of the scratch buffer (0 on the direct path).
    let scratchBytes: Int
    private let direct: Bool

    init(header: ClipHeader, options: RenderOptions, path: String) throws(ImageError) {
        let plan = DecodePlan.make(header: ImageHeader(header), options: options)
        scanout = options.rotation.scanoutSize(forCompose: options.canvas)
        output = plan.outputSize
        let window = plan.decodedWindow
        let decoded = plan.decodedSize
        guard window.width > 0, window.height > 0, output.width > 0, output.height > 0 else {
            throw ImageError(file: path, reason: .decodeFailed("no box for the picture"))
        }
        let scaleX = Double(output.width) / window.width
        let scaleY = Double(output.height) / window.height
        let width = max(output.width, Int((Double(decoded.width) * scaleX).rounded()))
        let height = max(output.height, Int((Double(decoded.height) * scaleY).rounded()))
        scaled = Size(width: width, height: height)
        crop = (
            min(width - output.width, max(0, Int((window.x * scaleX).rounded()))),
            min(height - output.height, max(0, Int((window.y * scaleY).rounded())))
        )
        mapping = PixelMapping(
            storedSize: output, orientation: header.orientation, destination: plan.placement.destination,
            canvas: options.canvas, rotation: options.rotation)
        direct = scaled == output && mapping.stepX == 1 && mapping.stepY == scanout.width
        scratchBytes = direct ? 0 : scaled.pixelCount * 4
        let origin = (x: mapping.base % max(1, scanout.width), y: mapping.base / max(1, scanout.width))
        // NV12's chroma is halved in each direction: the box must start and end on even rows and columns.
        planarOrigin =
            direct && origin.x % 2 == 0 && origin.y % 2 == 0 && output.width % 2 == 0 && output.height % 2 == 0
                && Frame.byteCount(scanout, .nv12) != nil ? origin : nil
    }

    /// Where the box starts in an NV12 frame of the scanout size, when the pictures can be scaled straight into
    /// one (the direct path, on even rows and columns); nil when they cannot.
    let planarOrigin: (x: Int, y: Int)?

    /// Scales `picture` into its box of the NV12 `frame`; false when the scaler refused it or the layout has no
    /// NV12 path.
    func drawPlanar(_ picture: UnsafeMutablePointer<AVFrame>, into frame: Frame, scaler: ClipScaler) -> Bool {
        guard let origin = planarOrigin, frame.layout == .nv12 else { return false }
        let width = scanout.width
        return scaler.scaleNV12(
            picture, luma: frame.luma + origin.y * width + origin.x,
            chroma: frame.chroma + origin.y / 2 * width + origin.x, target: output, stride: width)
    }

    /// Scales `picture` into its box of `frame`; false when the scaler refused the picture.
    func draw(
        _ picture: UnsafeMutablePointer<AVFrame>, into frame: Frame, scaler: ClipScaler,
        scratch: UnsafeMutableRawPointer?
    ) -> Bool {
        if direct {
            return scaler.scale(
                picture, into: UnsafeMutableRawPointer(frame.pixels + mapping.base), target: output,
                stride: scanout.width * 4)
        }
        guard let scratch, scaler.scale(picture, into: scratch, target: scaled, stride: scaled.width * 4) else {
            return false
        }
        let source = scratch.assumingMemoryBound(to: UInt32.self)
        for y in 0..<output.height {
            let row = source + (crop.y + y) * scaled.width + crop.x
            let start = frame.pixels + mapping.base + y * mapping.stepY
            if mapping.stepX == 1 {
                start.update(from: row, count: output.width)
            } else {
                for x in 0..<output.width { start[x * mapping.stepX] = row[x] }
            }
        }
        return true
    }
}
