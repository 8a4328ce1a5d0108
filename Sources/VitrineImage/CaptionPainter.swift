import VitrineCore

/// Draws a caption into a frame: near-white text over a soft dark shadow, so it reads on snow and on night
/// alike, in a corner of the photo's region of the upright canvas. It paints through the panel rotation.
public enum CaptionPainter {
    /// Paints `strip` at `position` inside `region` (canvas pixels); returns the canvas rectangle it covers.
    @discardableResult
    public static func paint(
        _ strip: TextRenderer.Strip, position: CaptionStyle.Position, region: Placement.Rect, canvas: Size,
        rotation: Rotation, into frame: Frame
    ) -> Placement.Rect {
        let shadow = max(1, strip.size.height / 14)
        let margin = max(4, min(region.width, region.height) / 30)
        let width = min(region.width - 2 * margin, strip.size.width + 2 * shadow)
        let height = min(region.height - 2 * margin, strip.size.height + 2 * shadow)
        guard width > 0, height > 0 else { return Placement.Rect(x: region.x, y: region.y, width: 0, height: 0) }
        let x: Int
        switch position {
        case .topLeft, .bottomLeft: x = region.x + margin
        case .topCenter, .bottomCenter: x = region.x + (region.width - width) / 2
        case .topRight, .bottomRight: x = region.x + region.width - margin - width
        }
        let y: Int
        switch position {
        case .topLeft, .topCenter, .topRight: y = region.y + margin
        case .bottomLeft, .bottomCenter, .bottomRight: y = region.y + region.height - margin - height
        }
        let box = Placement.Rect(x: x, y: y, width: width, height: height)
        let turn = PixelMapping.Affine(rotation.asOrientation, size: canvas)
        let stride = frame.size.width
        func coverage(_ textX: Int, _ textY: Int) -> UInt32 {
            guard textX >= 0, textX < strip.size.width, textY >= 0, textY < strip.size.height else { return 0 }
            return UInt32(strip.coverage[textY * strip.size.width + textX])
        }
        for row in 0..<height {
            for column in 0..<width {
                // The text starts `shadow` pixels in from the box's corner; its shadow is the text moved down and
                // right by `shadow`, spread by one pixel so thin strokes get a full outline.
                let textX = column - shadow
                let textY = row - shadow
                var shade: UInt32 = 0
                for dy in -1...1 {
                    for dx in -1...1 { shade = max(shade, coverage(textX - shadow + dx, textY - shadow + dy)) }
                }
                let alpha = coverage(textX, textY)
                guard shade > 0 || alpha > 0 else { continue }
                let (scanoutX, scanoutY) = turn.apply(box.x + column, box.y + row)
                let index = scanoutY * stride + scanoutX
                let pixel = frame.pixels[index]
                let keep = 255 - shade * 200 / 255
                func channel(_ shift: UInt32) -> UInt32 {
                    let shaded = (pixel >> shift & 0xFF) * keep / 255
                    return ((shaded * (255 - alpha) + 245 * alpha) / 255) << shift
                }
                frame.pixels[index] = channel(16) | channel(8) | channel(0)
            }
        }
        return box
    }
}
