import VitrineCore

/// Paints a QR code in the middle of the picture, on white with the four-module quiet zone the standard asks for
/// (ISO/IEC 18004, 9.1: phones' scanners fail without it), each module a whole number of pixels so no edge is
/// blurred. Returns what was under it, to take it off again.
public enum QRCodePainter {
    public static let quietModules = 4

    public static func paint(
        _ code: QRMatrix, canvas: Size, rotation: Rotation, into target: UnsafeMutablePointer<UInt32>, stride: Int
    ) -> BannerPainter.Saved? {
        let modules = code.width + 2 * quietModules
        // Two thirds of the picture's short side: a phone at arm's length reads it, and the photo still frames it.
        let scale = min(canvas.width, canvas.height) * 2 / 3 / modules
        guard scale >= 1 else { return nil }
        let side = modules * scale
        let box = Placement.Rect(
            x: (canvas.width - side) / 2, y: (canvas.height - side) / 2, width: side, height: side)
        let saved = BannerPainter.Saved(
            capturing: PixelMapping.scanoutRect(of: box, canvas: canvas, rotation: rotation), from: target,
            stride: stride)
        let turn = PixelMapping.Affine(rotation.asOrientation, size: canvas)
        for y in 0..<side {
            let moduleY = y / scale - quietModules
            for x in 0..<side {
                let moduleX = x / scale - quietModules
                let dark =
                    moduleX >= 0 && moduleY >= 0 && moduleX < code.width && moduleY < code.width
                    && code.isDark(x: moduleX, y: moduleY)
                let (scanoutX, scanoutY) = turn.apply(box.x + x, box.y + y)
                target[scanoutY * stride + scanoutX] = dark ? 0xFF00_0000 : 0xFFFF_FFFF
            }
        }
        return saved
    }
}
