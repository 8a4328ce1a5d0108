import VitrineCore
import VitrineImage
import VitrinePlatform

/// Text over the picture on screen: the category banner (or the slide's name) for a few seconds, else "Paused"
/// while the user paused; the web remote's pairing code for a minute after Info; and the corner's clock, date and
/// MQTT texts. It costs a strip the size of the text (and the code's square) and the pixels under them (kept to take
/// them off again), never another frame. The corner is painted into every picture as it is painted (each step of a
/// fade too, so the clock never blinks out with a slide change); the banner and the code are painted again over a
/// new picture once it is on screen.
package final class TextOverlay {
    /// Seconds a banner stays.
    static let bannerSeconds = 3.0
    /// Seconds the pairing code stays: long enough to find the phone and open its camera.
    package static let pairingSeconds = 60.0

    private struct Wanted: Equatable {
        var text: String?
        var code: QRMatrix?
        var lines: [CornerOverlay.Line] = []
        /// Which corner renderer drew the lines: a new one (another corner, size or look) draws them again.
        var painter: ObjectIdentifier?
    }

    /// The banner's font, made when the first banner is due (`wantsText`); nil until then, or without a font.
    package var renderer: TextRenderer?
    private let timer: MonotonicTimer
    private var banner: (text: String, until: Double)?
    private var pairing: (code: QRMatrix, until: Double)?
    /// What is painted, with the pixels under each part, in the order painted.
    private var shown: (wanted: Wanted, saved: [BannerPainter.Saved])?
    /// The corner's renderer, for the canvas it was made for; nil without an `overlay` section or a font.
    package var corner: CornerOverlay?
    /// What the corner should show now.
    package var cornerLines: [CornerOverlay.Line] = []

    package init(renderer: TextRenderer? = nil) throws(RuntimeError) {
        self.renderer = renderer
        timer = try MonotonicTimer()
    }

    /// A line that stays while set: where the photos are to come from while the library has none.
    package var notice: String?

    /// Whether text is due over the picture: a banner, the notice, or the pause sign while the user paused.
    package func wantsText(paused: Bool) -> Bool { banner != nil || notice != nil || paused }

    package var descriptor: Int32 { timer.descriptor }

    /// Whether the pairing code is up.
    var showsPairingCode: Bool { pairing != nil }

    package func announce(_ line: String, now: Double) {
        banner = (line, now + Self.bannerSeconds)
        rearm()
    }

    package func showPairingCode(_ code: QRMatrix, now: Double) {
        pairing = (code, now + Self.pairingSeconds)
        rearm()
    }

    package func timerFired(now: Double) {
        guard timer.acknowledge() else { return }
        if let banner, banner.until <= now { self.banner = nil }
        if let pairing, pairing.until <= now { self.pairing = nil }
        rearm()
    }

    private func rearm() {
        if let next = [banner?.until, pairing?.until].compactMap({ $0 }).min() {
            timer.arm(at: next)
        } else {
            timer.disarm()
        }
    }

    /// Paints the corner into a picture just painted (scanout pixels of the screen's whole picture): called for
    /// every picture and fade step, so what `shown` says is what the last painted buffer holds.
    package func decorate(canvas: Size, rotation: Rotation, pixels: UnsafeMutablePointer<UInt32>, stride: Int) {
        guard let corner, corner.canvas == canvas,
            let saved = corner.paint(cornerLines, rotation: rotation, into: pixels, stride: stride)
        else {
            shown = nil
            return
        }
        shown = (Wanted(lines: cornerLines, painter: ObjectIdentifier(corner)), [saved])
    }

    /// The corner as a layer for the plane above a picture that plane's neighbour below converts (a clip's NV12
    /// picture); what `shown` says is then the text with nothing under it to restore. Nil when there is nothing
    /// to show.
    package func cornerLayer(canvas: Size, rotation: Rotation) -> CornerLayer? {
        guard let corner, corner.canvas == canvas, let layer = corner.layer(cornerLines, rotation: rotation) else {
            shown = nil
            return nil
        }
        shown = (Wanted(lines: cornerLines, painter: ObjectIdentifier(corner)), [])
        return layer
    }

    /// Puts what should be over the picture there, or takes it away, through `show` (which paints the overlay at
    /// once: the caller asks only while the screen is lit and no flip is in flight).
    package func refresh(paused: Bool, canvas: Size, rotation: Rotation, show: (DisplayContent) -> Void) {
        let text = renderer == nil ? nil : banner?.text ?? notice ?? (paused ? "Paused" : nil)
        let lines = corner?.canvas == canvas ? cornerLines : []
        let wanted = Wanted(
            text: text, code: pairing?.code, lines: lines,
            painter: lines.isEmpty ? nil : corner.map(ObjectIdentifier.init))
        guard wanted != (shown?.wanted ?? Wanted()) else { return }
        let previous = shown?.saved ?? []
        let strip = text.flatMap { renderer?.render($0) }
        var painted: [BannerPainter.Saved] = []
        let corner = corner
        show(
            .overlay { pixels, _, stride in
                for saved in previous.reversed() { saved.restore(into: pixels, stride: stride) }
                if let corner, let saved = corner.paint(lines, rotation: rotation, into: pixels, stride: stride) {
                    painted.append(saved)
                }
                if let code = wanted.code,
                    let saved = QRCodePainter.paint(
                        code, canvas: canvas, rotation: rotation, into: pixels, stride: stride)
                {
                    painted.append(saved)
                }
                if let strip {
                    painted.append(
                        BannerPainter.paint(strip, canvas: canvas, rotation: rotation, into: pixels, stride: stride))
                }
                return previous.map(\.rect) + painted.map(\.rect)
            })
        shown = painted.isEmpty ? nil : (wanted, painted)
    }
}
