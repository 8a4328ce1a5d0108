import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrinePlatform

/// A screen of a mirror (`mirror: true`) beside the show's own: it shows the show's slides at its own size, with
/// its own corner and banners, and follows its own plugs, power and seat. The slides are the show's; what decodes
/// them at this screen's size is its group's (`Mirrors`).
final class MirrorScreen {
    let name: String
    /// The show's settings, with this screen's connector, mode and rotation.
    var settings: Settings
    let display: DisplayController
    let screenDescription: String
    var profileNow: DeviceProfile
    let overlay: TextOverlay
    /// The screen was unplugged; it waits, and the show goes on while another screen is there.
    var unplugged = false
    /// Slides that reached it (the metrics).
    private(set) var slidesShown = 0
    /// The picture on it, painted again when the display has lost it (a modeset).
    private(set) var last: (frame: Frame, record: PresentRecord)?
    private var bannerFontAsked = false
    private var cornerRequests = 0

    init(output: DisplayOpener.OpenedOutput, budget: MemoryBudget, snapshots: SnapshotWriter?, log: EventLog)
        throws(PlayError)
    {
        name = output.name
        settings = output.settings
        profileNow = output.display.profile
        screenDescription = output.display.description
        display =
            try Show.makeDisplay(
                opened: output.display, settings: output.settings, budget: budget, snapshots: snapshots, log: log
            ).display
        do {
            overlay = try TextOverlay()
        } catch {
            throw PlayError("\(error)")
        }
    }

    var connectorName: String? { (display.executor as? DRMDisplay)?.connector.name }

    /// How this screen's pictures are decoded: the show's settings at its size and rotation.
    func renderOptions(places: PlaceIndex?) -> RenderOptions {
        Show.renderOptions(settings, profile: profileNow, places: places)
    }

    /// A slide of the show, made at this screen's size; a crossfade from the one on it where fades are on.
    func show(_ frame: Frame, _ record: PresentRecord) {
        last = (frame, record)
        display.present(frame, record, now: MonotonicClock.seconds())
    }

    func showBackground(_ color: RGBColor) {
        last = nil
        display.show(.background(color))
    }

    /// What the display did since the last look. A redraw paints the last picture again (black when it was made for
    /// another size: its group brings one at the new size).
    func drain(house: PlayerRuntime, background: RGBColor) {
        while true {
            let outputs = display.takeOutputs()
            if outputs.isEmpty { return }
            for output in outputs {
                switch output {
                case .completed(.blend, _, let at):
                    display.feedFade(now: min(at, MonotonicClock.seconds()), hurry: false)
                case .completed(let content, _, _):
                    if case .frame = content.shown { slidesShown += 1 }
                    if content.shown.isPicture { house.pictureShown(on: house.show) }
                case .redraw:
                    if let last, last.frame.size == display.size {
                        display.present(last.frame, last.record, now: MonotonicClock.seconds())
                    } else {
                        display.show(.background(background))
                    }
                case .seatReleased:
                    house.seatReleased(by: ObjectIdentifier(self))
                case .reappeared, .prefetchesReleased:
                    // Nothing is deferred here: the group decodes what the show has submitted.
                    break
                }
            }
        }
    }

    /// The banner, the pause sign, the show's notice and the corner's lines, as on the show's screen.
    func refreshOverlay(paused: Bool, notice: String?, cornerLines: [CornerOverlay.Line], house: PlayerRuntime) {
        overlay.cornerLines = cornerLines
        guard display.isLit, !display.isBusy, !display.screen.isFading else { return }
        overlay.notice = notice
        if overlay.wantsText(paused: paused), overlay.renderer == nil, !bannerFontAsked {
            bannerFontAsked = true
            house.loadBannerFont(settings: settings, canvas: profileNow.compose, into: overlay) { [weak self] in
                self?.refreshOverlay(paused: paused, notice: notice, cornerLines: cornerLines, house: house)
            }
        }
        overlay.refresh(
            paused: paused, canvas: profileNow.compose, rotation: profileNow.rotation, show: { display.show($0) })
    }

    /// The corner's renderer for the canvas as it is now.
    func makeCorner(house: PlayerRuntime) {
        display.corner = (overlay, profileNow.compose, profileNow.rotation)
        cornerRequests += 1
        let request = cornerRequests
        house.makeCorner(settings: settings, canvas: profileNow.compose, into: overlay) { [weak self] in
            guard let self else { return true }
            return cornerRequests != request || settings.overlay == nil
        }
    }

    /// Its connector changed. Returns true when it came back at another size (its pictures must be made anew).
    func screenChanged(table: DeviceTable, log: EventLog, now: Double) -> Bool {
        guard let drm = display.executor as? DRMDisplay, let connector = drm.probeConnector() else { return false }
        guard connector.connected,
            let (mode, profile) = DisplayOpener.chooseMode(for: connector, settings: settings, table: table, log: log)
        else {
            guard !unplugged else { return false }
            unplugged = true
            log(.warning, "\(connector.name) disconnected; the mirror goes on on the other screens")
            display.unplugged(now: now)
            return false
        }
        guard unplugged || mode.size != drm.size else { return false }
        unplugged = false
        if mode.size == drm.size {
            log("\(connector.name) connected again at \(mode)")
            drm.use(mode)
            display.plugged(sameMode: true, now: now)
            return false
        }
        log("\(connector.name) connected again at \(mode): profile \(profile.id), compose \(profile.compose)")
        drm.pendingMode = mode
        profileNow = profile
        display.plugged(sameMode: false, now: now)
        return true
    }
}
