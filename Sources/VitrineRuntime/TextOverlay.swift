import VitrineCore
import VitrineImage

/// Text over the picture on screen: the category banner (or the slide's name) for a few seconds, else "Paused"
/// while the user paused. It costs a strip the size of the text and the pixels under it (kept to take the text
/// off again), never another frame. A new picture comes without text; the text is painted again over it.
final class TextOverlay {
    /// Seconds a banner stays.
    static let bannerSeconds = 3.0

    private let renderer: TextRenderer?
    private let timer: MonotonicTimer
    private var banner: String?
    private var shown: (text: String, saved: BannerPainter.Saved)?

    init(renderer: TextRenderer?) throws(RuntimeError) {
        self.renderer = renderer
        timer = try MonotonicTimer()
    }

    var descriptor: Int32 { timer.descriptor }

    func announce(_ line: String, now: Double) {
        banner = line
        timer.arm(at: now + Self.bannerSeconds)
    }

    func timerFired() {
        if timer.acknowledge() { banner = nil }
    }

    /// The picture under the text was replaced: nothing of it is on screen any more.
    func pictureReplaced() { shown = nil }

    /// Puts the text that should be over the picture there, or takes it away, through `show` (which paints the
    /// overlay at once: the caller asks only while the screen is lit and no flip is in flight).
    func refresh(paused: Bool, canvas: Size, rotation: Rotation, show: (DisplayContent) -> Void) {
        guard let renderer else { return }
        let wanted = banner ?? (paused ? "Paused" : nil)
        guard wanted != shown?.text else { return }
        let previous = shown?.saved
        let strip = wanted.map { renderer.render($0) }
        var painted: BannerPainter.Saved?
        show(
            .overlay { pixels, _, stride in
                previous?.restore(into: pixels, stride: stride)
                if let strip {
                    painted = BannerPainter.paint(
                        strip, canvas: canvas, rotation: rotation, into: pixels, stride: stride)
                }
            })
        if let wanted, let painted {
            shown = (wanted, painted)
        } else {
            shown = nil
        }
    }
}
