import VitrineCore

/// Paints a line of text as a banner at the bottom centre of the upright picture: light text on a darkened box.
/// It paints through the panel rotation, so the text reads upright on a rotated panel.
public enum BannerPainter {
    /// A painted banner: the scanout rectangle it covers and the pixels that were there, to put back.
    public struct Saved: Sendable {
        public var rect: Placement.Rect
        public var pixels: [UInt32]

        /// The pixels of `rect` in `target` as they are now, to put back later.
        public init(capturing rect: Placement.Rect, from target: UnsafeMutablePointer<UInt32>, stride: Int) {
            var pixels = [UInt32](repeating: 0, count: rect.width * rect.height)
            pixels.withUnsafeMutableBufferPointer { saved in
                guard let base = saved.baseAddress else { return }
                for row in 0..<rect.height {
                    (base + row * rect.width).update(from: target + (rect.y + row) * stride + rect.x, count: rect.width)
                }
            }
            self.rect = rect
            self.pixels = pixels
        }

        /// Writes the saved pixels back.
        public func restore(into target: UnsafeMutablePointer<UInt32>, stride: Int) {
            pixels.withUnsafeBufferPointer { saved in
                guard let base = saved.baseAddress else { return }
                for row in 0..<rect.height {
                    (target + (rect.y + row) * stride + rect.x).update(from: base + row * rect.width, count: rect.width)
                }
            }
        }
    }

    public static func paint(
        _ strip: TextRenderer.Strip, canvas: Size, rotation: Rotation, into target: UnsafeMutablePointer<UInt32>,
        stride: Int
    ) -> Saved {
        let padding = max(2, strip.size.height / 3)
        let width = min(canvas.width, strip.size.width + 2 * padding)
        let height = min(canvas.height, strip.size.height + 2 * padding)
        let box = Placement.Rect(
            x: (canvas.width - width) / 2, y: max(0, canvas.height - height - canvas.height / 16), width: width,
            height: height)
        let saved = Saved(
            capturing: PixelMapping.scanoutRect(of: box, canvas: canvas, rotation: rotation), from: target,
            stride: stride)
        let turn = PixelMapping.Affine(rotation.asOrientation, size: canvas)
        for y in 0..<height {
            for x in 0..<width {
                let (scanoutX, scanoutY) = turn.apply(box.x + x, box.y + y)
                let index = scanoutY * stride + scanoutX
                let pixel = target[index]
                // Darken the photo under the box to a third, then lay the text over it in near-white.
                var red = (pixel >> 16 & 0xFF) / 3
                var green = (pixel >> 8 & 0xFF) / 3
                var blue = (pixel & 0xFF) / 3
                let textX = x - padding
                let textY = y - padding
                if textX >= 0, textX < strip.size.width, textY >= 0, textY < strip.size.height {
                    let alpha = UInt32(strip.coverage[textY * strip.size.width + textX])
                    red = (red * (255 - alpha) + 245 * alpha) / 255
                    green = (green * (255 - alpha) + 245 * alpha) / 255
                    blue = (blue * (255 - alpha) + 245 * alpha) / 255
                }
                target[index] = red << 16 | green << 8 | blue
            }
        }
        return saved
    }
}
