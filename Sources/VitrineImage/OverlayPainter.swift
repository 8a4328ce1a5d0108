import VitrineCore

/// Paints the overlay's lines (the clock, the date, MQTT texts) in a corner of the upright picture, one under the
/// other, each aligned to the corner's side: light text with a soft shadow (readable on any photo without hiding
/// it), or on a translucent plate. It paints through the panel rotation, so the text reads upright on a rotated
/// panel, and returns what was under it so a minute's redraw costs only this rectangle.
public enum OverlayPainter {
    public static func paint(
        _ strips: [TextRenderer.Strip], corner: CaptionStyle.Position, look: OverlaySettings.Look, canvas: Size,
        rotation: Rotation, into target: UnsafeMutablePointer<UInt32>, stride: Int
    ) -> BannerPainter.Saved? {
        guard let layout = Layout(strips, corner: corner, canvas: canvas) else { return nil }
        let saved = BannerPainter.Saved(
            capturing: PixelMapping.scanoutRect(of: layout.box, canvas: canvas, rotation: rotation), from: target,
            stride: stride)
        layout.forEachPixel(look: look, canvas: canvas, rotation: rotation, stride: stride) { index, alpha, dark in
            let pixel = target[index]
            var red = pixel >> 16 & 0xFF
            var green = pixel >> 8 & 0xFF
            var blue = pixel & 0xFF
            switch look {
            case .plate:
                // Half the photo's light under the whole box.
                red /= 2
                green /= 2
                blue /= 2
            case .shadow:
                // The text's own shape, moved down and right, darkens the photo to a quarter.
                red = divideBy255(red * (255 - dark))
                green = divideBy255(green * (255 - dark))
                blue = divideBy255(blue * (255 - dark))
            }
            red = divideBy255(red * (255 - alpha) + textLevel * alpha)
            green = divideBy255(green * (255 - alpha) + textLevel * alpha)
            blue = divideBy255(blue * (255 - alpha) + textLevel * alpha)
            target[index] = red << 16 | green << 8 | blue
        }
        return saved
    }

    /// The same lines as a layer for a plane above the picture (a clip's NV12 on the primary plane, the text on an
    /// overlay plane): premultiplied ARGB8888 pixels of the scanout rectangle the text covers, row by row, the rest
    /// of the rectangle transparent. Laid over a picture (C + picture * (1 - A)) it gives what `paint` paints into
    /// that picture, to rounding: the shadow's darkening and the text's cover multiply, so A = 1 - (1 - shadow)
    /// (1 - text) and C = the text's light. Nil when there is nothing to paint.
    public static func layer(
        _ strips: [TextRenderer.Strip], corner: CaptionStyle.Position, look: OverlaySettings.Look, canvas: Size,
        rotation: Rotation
    ) -> (rect: Placement.Rect, pixels: [UInt32])? {
        guard let layout = Layout(strips, corner: corner, canvas: canvas) else { return nil }
        let rect = PixelMapping.scanoutRect(of: layout.box, canvas: canvas, rotation: rotation)
        var pixels = [UInt32](repeating: 0, count: rect.width * rect.height)
        pixels.withUnsafeMutableBufferPointer { layer in
            layout.forEachPixel(
                look: look, canvas: canvas, rotation: rotation, stride: rect.width, origin: (rect.x, rect.y)
            ) { index, alpha, dark in
                // What of the picture shows through: (1 - shadow) or a plate's half, then (1 - text).
                let under: UInt32 = look == .plate ? 128 : 255 - dark
                let through = divideBy255(under * (255 - alpha))
                let light = divideBy255(textLevel * alpha)
                layer[index] = (255 - through) << 24 | light << 16 | light << 8 | light
            }
        }
        return (rect, pixels)
    }

    /// The text's light (not quite white: softer on a dark photo).
    private static let textLevel: UInt32 = 245

    /// Where the lines go: their box in the upright picture and their text coverage in it.
    private struct Layout {
        let box: Placement.Rect
        let text: [UInt8]
        let shadow: Int

        init?(_ strips: [TextRenderer.Strip], corner: CaptionStyle.Position, canvas: Size) {
            let lines = strips.filter { $0.size.width > 0 && $0.size.height > 0 }
            guard let tallest = lines.map(\.size.height).max() else { return nil }
            let padding = max(2, tallest / 3)
            let shadow = max(1, tallest / 16)
            let width = min(canvas.width, (lines.map(\.size.width).max() ?? 0) + 2 * padding + shadow)
            let height = min(canvas.height, lines.reduce(0) { $0 + $1.size.height } + 2 * padding + shadow)
            let margin = min(canvas.width, canvas.height) / 32
            let x: Int
            switch corner {
            case .topLeft, .bottomLeft: x = margin
            case .topCenter, .bottomCenter: x = (canvas.width - width) / 2
            case .topRight, .bottomRight: x = canvas.width - width - margin
            }
            let top = corner == .topLeft || corner == .topCenter || corner == .topRight
            box = Placement.Rect(
                x: max(0, x), y: top ? min(margin, canvas.height - height) : max(0, canvas.height - height - margin),
                width: width, height: height)
            // Text coverage in box coordinates.
            var text = [UInt8](repeating: 0, count: width * height)
            var lineTop = padding
            for strip in lines {
                let left: Int
                switch corner {
                case .topLeft, .bottomLeft: left = padding
                case .topCenter, .bottomCenter: left = (width - shadow - strip.size.width) / 2
                case .topRight, .bottomRight: left = width - shadow - padding - strip.size.width
                }
                for row in 0..<strip.size.height where lineTop + row < height {
                    for column in 0..<strip.size.width where left + column >= 0 && left + column < width {
                        text[(lineTop + row) * width + left + column] = strip.coverage[row * strip.size.width + column]
                    }
                }
                lineTop += strip.size.height
            }
            self.text = text
            self.shadow = shadow
        }

        /// Calls `body` with each scanout index of the box, its text coverage and its shadow's, through the
        /// rotation; with a shadow, only where either is there (most of the box is photo neither touches). Indexes
        /// count from `origin` (the scanout's corner, or a layer's own rectangle) in rows of `stride`.
        func forEachPixel(
            look: OverlaySettings.Look, canvas: Size, rotation: Rotation, stride: Int,
            origin base: (x: Int, y: Int) = (0, 0),
            _ body: (Int, UInt32, UInt32) -> Void
        ) {
            let turn = PixelMapping.Affine(rotation.asOrientation, size: canvas)
            // The box's rows and columns walk the scanout in fixed steps, whatever the rotation.
            let columnStep = turn.m10 * stride + turn.m00
            let rowStep = turn.m11 * stride + turn.m01
            let corner = turn.apply(box.x, box.y)
            let origin = (x: corner.x - base.x, y: corner.y - base.y)
            let (width, height) = (box.width, box.height)
            text.withUnsafeBufferPointer { text in
                for y in 0..<height {
                    var index = origin.y * stride + origin.x + y * rowStep
                    for x in 0..<width {
                        defer { index += columnStep }
                        let alpha = UInt32(text[y * width + x])
                        let dark =
                            look == .shadow && x >= shadow && y >= shadow
                            ? UInt32(text[(y - shadow) * width + x - shadow]) * 3 / 4 : 0
                        if look == .shadow, alpha == 0, dark == 0 { continue }
                        body(index, alpha, dark)
                    }
                }
            }
        }
    }

    /// `value / 255` without a division, exact for every product of two bytes (at most 255 * 255).
    @inline(__always) private static func divideBy255(_ value: UInt32) -> UInt32 { (value + 1 + value >> 8) >> 8 }
}
