import VitrineCore
import VitrinePlatform

/// The overlay's corner as it is drawn: the clock's line at the configured size, the date and the MQTT texts
/// smaller under it. Each distinct line is rendered once and kept while it is shown, so a minute's redraw renders
/// only the clock's new line and paints only the corner's rectangle.
public final class CornerOverlay {
    public struct Line: Hashable, Sendable {
        public var text: String
        /// The clock's line, at the full size; the others are smaller.
        public var large: Bool

        public init(_ text: String, large: Bool = false) {
            self.text = text
            self.large = large
        }
    }

    /// The corner's lines: the clock's (large, when the clock is on), then the date, then the texts' lines.
    public static func lines(clock: [String], clockIsOn: Bool, texts: [String]) -> [Line] {
        clock.enumerated().map { index, text in Line(text, large: clockIsOn && index == 0) } + texts.map { Line($0) }
    }

    /// The date and texts are this much of the clock's height: they are read less often, and the corner stays small.
    public static let smallShare = 0.6

    public let settings: OverlaySettings
    public let canvas: Size
    private let large: TextRenderer
    private let small: TextRenderer
    private var strips: [Line: TextRenderer.Strip] = [:]
    /// The last layer made, for the lines and rotation it shows: a clip's pictures all get the same one.
    private var lastLayer: (lines: [Line], rotation: Rotation, layer: CornerLayer)?

    /// Throws, naming the font, when it cannot be loaded.
    public init(settings: OverlaySettings, canvas: Size, fontPath: String) throws(FileError) {
        self.settings = settings
        self.canvas = canvas
        let height = max(8, Int((settings.size * Double(canvas.height)).rounded()))
        large = try TextRenderer(fontPath: fontPath, pixelHeight: height)
        small = try TextRenderer(fontPath: fontPath, pixelHeight: max(8, Int(Double(height) * Self.smallShare)))
    }

    /// Paints `lines` over the picture in `target` (scanout pixels, `stride` pixels a row) and returns what was
    /// under them; nil when there is nothing to paint.
    public func paint(
        _ lines: [Line], rotation: Rotation, into target: UnsafeMutablePointer<UInt32>, stride: Int
    ) -> BannerPainter.Saved? {
        guard !lines.isEmpty else { return nil }
        return OverlayPainter.paint(
            strips(for: lines), corner: settings.corner, look: settings.look, canvas: canvas, rotation: rotation,
            into: target, stride: stride)
    }

    /// `lines` as a layer for a plane above the picture (see `OverlayPainter.layer`); the same object while the
    /// lines and rotation stay, so a screen can tell that a buffer already holds it. Nil when there is nothing to
    /// paint.
    public func layer(_ lines: [Line], rotation: Rotation) -> CornerLayer? {
        guard !lines.isEmpty else { return nil }
        if let lastLayer, lastLayer.lines == lines, lastLayer.rotation == rotation { return lastLayer.layer }
        guard
            let made = OverlayPainter.layer(
                strips(for: lines), corner: settings.corner, look: settings.look, canvas: canvas, rotation: rotation)
        else { return nil }
        let layer = CornerLayer(rect: made.rect, pixels: made.pixels)
        lastLayer = (lines, rotation, layer)
        return layer
    }

    /// The lines rendered, each kept while it is shown.
    private func strips(for lines: [Line]) -> [TextRenderer.Strip] {
        var kept: [Line: TextRenderer.Strip] = [:]
        let rendered = lines.map { line in
            let strip = strips[line] ?? (line.large ? large : small).render(line.text)
            kept[line] = strip
            return strip
        }
        strips = kept
        return rendered
    }
}

/// The corner's text as a plane above the picture shows it: premultiplied ARGB8888 pixels of a scanout rectangle,
/// row by row.
public final class CornerLayer: Sendable {
    public let rect: Placement.Rect
    public let pixels: [UInt32]

    init(rect: Placement.Rect, pixels: [UInt32]) {
        self.rect = rect
        self.pixels = pixels
    }
}
