import CLinux
import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrineInput
import VitrineLibrary
import VitrineLinks
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One screen's show: the `Player` state machine with its slide timer, the display it plays on, the decodes that
/// feed it, the text over it and the clip in play. The runtime (`PlayerRuntime`) owns what the shows share: the
/// loop, the signals, the links to the world, the memory budget. The show only carries out its player's actions and
/// its display's outputs, and tells the runtime what the links must hear.
final class Show {
    unowned let house: PlayerRuntime
    /// How commands address it: the output's name, or the connector's.
    let name: String
    /// The settings this show plays with: the config's, with what its output says differently.
    var settings: Settings
    /// Its entry in the config's `outputs` (or the screen a mirror found); nil for a config without them.
    let output: OutputSettings?
    var log: EventLog { house.log }
    /// What its frames and decodes are charged to: the board's budget, or this screen's share of it where each
    /// screen has a show.
    let budget: MemoryBudget
    let library: Library
    let profile: DeviceProfile
    var profileNow: DeviceProfile
    var renderOptions: RenderOptions
    var player: Player
    let timer: MonotonicTimer
    let worker: DecodeWorker
    /// The category list, indexing, inotify and the rendition cache.
    let follower: LibraryFollower
    let display: DisplayController
    let screenDescription: String
    /// Saves the slide on screen for a restart, when a position file is set.
    let position: PositionKeeper?
    let inputHoldTimer: MonotonicTimer
    /// Keys and touch as this screen reads them (its gestures in its own size and rotation).
    var inputRouter: InputRouter
    /// Text over the picture: the category banner for a few seconds, else the pause sign while paused by the user;
    /// the corner's clock, date and texts.
    let overlay: TextOverlay
    /// The corner's lines as they should be now; nil without an `overlay` section.
    var live: LiveOverlay?
    /// Whether the screen was lit at the last turn, as the clock was told.
    var clockSeesScreen: Bool?
    /// The screen was unplugged; the show holds (screen-off reason) until it is back.
    var unplugged = false
    /// The banner's font has been asked for (`loadBannerFont`).
    var bannerFontAsked = false
    /// Counts the corners asked for: a corner made for an older request (before another replug) is dropped.
    var cornerRequests = 0
    /// When the day-part in force (or none) gives way to another, local time; nil when nothing changes soon.
    var dayPartUntil: LocalMinute?
    private var armedGeneration: Int?
    private var armedDeadline: Double?
    /// The deadline that made the show advance, until the slide it asked for is on screen (for `--stats`).
    var advanceDeadline: Double?
    var decodes: [SlideID: (file: String?, milliseconds: Double, captions: [String?])] = [:]
    var presentedCount = 0
    /// The slide on screen, the playlist's size and the slide's number in it, as last told to the broker.
    var mqttPosition: (slide: SlideID?, count: Int, position: Int?)?
    /// The picture of this show's slide for the web remote, once a page asked for it; the first screen's show uses
    /// the runtime's, which MQTT shares.
    var pictures: SlidePictures?
    /// The other screens of a mirror, which show this show's slides; nil unless `mirror` found several screens.
    var mirrors: Mirrors?
    /// The clip on screen as it plays; nil while a photo is shown.
    var clipPlayback: ClipPlayback?
    /// When the clip's next picture is due; and the bell its stream rings.
    let clipTimer: MonotonicTimer
    let clipWakeup: Wakeup
    /// How the last clip played (`status`).
    var clipFigures: ClipPacer.Figures?

    /// The previous slide is kept too only when, after everything else, the budget still has this much room
    /// for a progressive decode (whose coefficients libjpeg must hold whole).
    static let progressiveReserve = 96 << 20
    /// A fade holds the outgoing and the incoming frame, and a decode the viewer asks for during it a third; they
    /// are on top of the minimum (two scanout buffers and one frame), with this much left for decoding.
    static let fadeDecodeRoom = 16 << 20

    /// The show on `opened`, its screen, with `settings`; a problem the user must fix is thrown as one line.
    init(
        house: PlayerRuntime, name: String, settings: Settings, output: OutputSettings?,
        opened: DisplayOpener.OpenedDisplay, budget: MemoryBudget,
        resume: (slide: SlideID?, selection: SelectionState?), position: PositionKeeper?, crashGuard: CrashGuard,
        snapshots: SnapshotWriter?
    ) throws(PlayError) {
        self.house = house
        self.name = name
        self.settings = settings
        self.output = output
        let log = house.log
        self.budget = budget
        profile = opened.profile
        profileNow = opened.profile
        screenDescription = opened.description
        library = Library(root: settings.library)
        self.position = position
        renderOptions = Self.renderOptions(settings, profile: profile, places: house.places)
        let screen = try Self.makeDisplay(
            opened: opened, settings: settings, budget: budget, snapshots: snapshots, log: log)
        display = screen.display
        let fades = screen.fades
        let needed = profile.minimumBudgetBytes
        let frameBytes = profile.compose.xrgbByteCount ?? 0
        let fadeFrames = fades == nil ? 0 : frameBytes
        let keepPrevious =
            budget.limit - needed - frameBytes - fadeFrames - screen.thirdBufferBytes
            >= Self.progressiveReserve + frameBytes
        inputRouter = InputRouter(
            gestures: GestureRecognizer(
                rotation: profile.rotation, physicalSize: opened.connector?.physicalSizeMillimetres,
                pixelSize: profile.scanout))
        player = Player(
            options: Player.Options(
                interval: settings.interval, order: settings.order, startCategory: settings.startCategory,
                keepPrevious: keepPrevious, seed: UInt64(truncatingIfNeeded: Int(MonotonicClock.seconds() * 1e6)),
                pauseOnInput: settings.pauseOnInput, transitionSeconds: fades ?? 0, resume: resume.slide,
                wakeOutsideSchedule: settings.presence?.wakeOutsideSchedule ?? false, mix: settings.mix,
                pairPortraits: settings.pairPortraits && profile.compose.width > profile.compose.height,
                resumeSelection: resume.selection, dayPartHold: settings.dayParts?.hold),
            favourites: house.favouritesStore?.load(rating: settings.favouriteRating)
                ?? Favourites(rating: settings.favouriteRating))
        do {
            timer = try MonotonicTimer()
            follower = try LibraryFollower(settings: settings, profile: profile, log: log, crashGuard: crashGuard)
            inputHoldTimer = try MonotonicTimer()
            overlay = try TextOverlay()
            clipTimer = try MonotonicTimer()
            clipWakeup = try Wakeup()
            worker = try DecodeWorker(
                budget: budget, options: renderOptions, fontPath: settings.fontPath ?? TextRenderer.defaultFont,
                crashGuard: crashGuard)
        } catch {
            throw PlayError("\(error)")
        }
    }

    static func renderOptions(_ settings: Settings, profile: DeviceProfile, places: PlaceIndex?) -> RenderOptions {
        var caption = settings.caption
        caption.locale = settings.locale ?? DateStyle.processDefault()
        var options = RenderOptions(
            canvas: profile.compose, fit: settings.fit ?? profile.fit, rotation: profile.rotation,
            background: settings.background, maxMegapixels: settings.maxMegapixels, caption: caption)
        options.colorManagement = settings.colorManagement
        options.places = places
        options.clipDecoding = settings.video.decoder
        return options
    }

    /// The screen `opened` with its scanout buffers (a third where a fade's step is slow to blend), and the
    /// crossfade it can show (nil: cuts).
    static func makeDisplay(
        opened: DisplayOpener.OpenedDisplay, settings: Settings, budget: MemoryBudget, snapshots: SnapshotWriter?,
        log: EventLog
    ) throws(PlayError) -> (display: DisplayController, fades: Double?, thirdBufferBytes: Int) {
        let profile = opened.profile
        let frameBytes = profile.compose.xrgbByteCount ?? 0
        let fades = Self.fadeSeconds(
            settings, profile: profile, budget: budget, blendsCleanly: opened.fbdev?.blendsCleanly ?? true,
            screen: opened.description, log: log)
        let scanoutBytes = profile.scanout.xrgbByteCount ?? Int.max / 4
        let fadeNeeds = profile.minimumBudgetBytes + 2 * frameBytes + Self.fadeDecodeRoom
        var scanoutBuffers = 2
        if fades != nil, opened.fbdev == nil, budget.limit - fadeNeeds >= scanoutBytes {
            let refresh = max(opened.mode?.refresh ?? 60, 1)
            let step = FrameBlender.stepSeconds(at: profile.compose, clock: MonotonicClock.seconds)
            scanoutBuffers = PlayerRuntime.fadeBuffers(stepSeconds: step, refreshHz: refresh)
            log(
                "crossfades: a step blends in \(JSONText.number(step * 1000)) ms of a "
                    + "\(JSONText.number(1000 / Double(refresh))) ms frame here: \(scanoutBuffers) scanout buffers")
        }
        do {
            let executor: any DisplayExecutor
            if let fbdev = opened.fbdev {
                executor = fbdev
            } else if let seat = opened.seat, let connector = opened.connector, let mode = opened.mode {
                executor = try DRMDisplay(
                    seat: seat, connector: connector, crtc: opened.crtc, mode: mode, budget: budget,
                    bufferCount: scanoutBuffers, log: log)
            } else if let device = opened.device, let connector = opened.connector, let mode = opened.mode {
                executor = try DRMDisplay(
                    device: device, connector: connector, mode: mode, budget: budget, bufferCount: scanoutBuffers,
                    log: log)
            } else {
                executor = try HeadlessDisplay(
                    size: profile.scanout, budget: budget, bufferCount: scanoutBuffers, snapshots: snapshots)
            }
            let display = try DisplayController(executor: executor, fadeSeconds: fades, log: log)
            return (display, fades, scanoutBuffers == 3 ? scanoutBytes : 0)
        } catch let error as PlayError {
            throw error
        } catch {
            throw PlayError("\(error)")
        }
    }

    /// The crossfade length, or nil for cuts: from the settings, else the profile; refused (with a log line) when
    /// the screen cannot change in steps without tearing or the budget has no room for the frames a fade holds.
    static func fadeSeconds(
        _ settings: Settings, profile: DeviceProfile, budget: MemoryBudget, blendsCleanly: Bool, screen: String,
        log: EventLog
    ) -> Double? {
        guard (settings.transition ?? profile.transition) == .fade else { return nil }
        guard blendsCleanly else {
            log(.notice, "crossfades off: \(screen) cannot change the picture in steps without tearing")
            return nil
        }
        let frameBytes = profile.compose.xrgbByteCount ?? Int.max / 4
        let needed = profile.minimumBudgetBytes + 2 * frameBytes + fadeDecodeRoom
        guard budget.limit >= needed else {
            log(
                "crossfades off: the budget of \(MemoryBudget.format(budget.limit)) has no room for the two extra "
                    + "\(profile.compose) frames a fade holds (\(MemoryBudget.format(needed)) needed)")
            return nil
        }
        return settings.transitionSeconds ?? profile.transitionSeconds
    }

    /// The connector it plays on (`HDMI-A-1`), where it is a DRM screen.
    var connectorName: String? { (display.executor as? DRMDisplay)?.connector.name }

    /// Portrait pairs only make sense on a landscape canvas.
    var pairsPortraits: Bool {
        settings.pairPortraits && profileNow.compose.width > profileNow.compose.height
    }

    /// The show's own descriptors in the loop, each with its handler (its display's are the runtime's to add: two
    /// screens of one card share the card's).
    func register(in loop: EventLoop) throws(RuntimeError) {
        try loop.add(timer.descriptor) { [unowned self] _ in slideTimerFired(now: MonotonicClock.seconds()) }
        try loop.add(worker.wakeup.descriptor) { [unowned self] _ in
            let now = MonotonicClock.seconds()
            for outcome in worker.takeOutcomes() { deliver(outcome, now: now) }
        }
        try follower.register(in: loop, show: { [unowned self] in followedShow }) { [unowned self] found in
            sendAll(found)
        }
        try loop.add(clipTimer.descriptor) { [unowned self] _ in
            if clipTimer.acknowledge() { pumpClip(now: MonotonicClock.seconds()) }
        }
        try loop.add(clipWakeup.descriptor) { [unowned self] _ in clipStreamRang(now: MonotonicClock.seconds()) }
        try loop.add(inputHoldTimer.descriptor) { [unowned self] _ in
            if inputHoldTimer.acknowledge() { send(.inputHoldEnded(now: MonotonicClock.seconds())) }
        }
        try loop.add(overlay.descriptor) { [unowned self] _ in overlay.timerFired(now: MonotonicClock.seconds()) }
        if let position { try loop.add(position.descriptor) { _ in position.timerFired() } }
    }

    /// Ends the show: the screen first (the console back at once), then the clip and the worker, which may be in the
    /// middle of a photo.
    func close() {
        position?.saveAndWait()
        display.close()
        mirrors?.close()
        pictures?.stop()
        stopClip()
        worker.stop()
        follower.stop()
    }

    private func slideTimerFired(now: Double) {
        timer.acknowledge()
        guard let generation = armedGeneration else { return }
        // An expiry seconds after its deadline means the system slept through it (s2idle keeps CLOCK_MONOTONIC
        // running, and its suspend counter may be updated only after user space runs again): no catch-up.
        if let deadline = armedDeadline, SleepDetector.firedLate(deadline: deadline, now: now),
            house.wokeFromSleep("the slide timer fired \(Int(now - deadline)) s late: the system slept")
        {
            return
        }
        advanceDeadline = armedDeadline
        send(.timerFired(generation: generation, now: now))
    }

    func send(_ event: Player.Event) {
        perform(player.handle(narrowed(event)))
    }

    /// The library's categories as this show has them: only those its output names, where it names some.
    private func narrowed(_ event: Player.Event) -> Player.Event {
        guard let only = settings.categories else { return event }
        switch event {
        case .start(let categories, let now): return .start(categories: categories.filter(only.contains), now: now)
        case .categoriesChanged(let categories, let now):
            return .categoriesChanged(categories.filter(only.contains), now: now)
        default: return event
        }
    }

    func sendAll(_ events: [Player.Event]?) {
        for event in events ?? [] { send(event) }
    }

    /// What the show plays, for the library follower at each call.
    var followedShow: LibraryFollower.Show {
        LibraryFollower.Show(
            active: player.active, playlist: player.playlist, order: player.options.order,
            pairPortraits: pairsPortraits, minRating: settings.minRating)
    }

    func perform(_ actions: [Player.Action]) {
        for action in actions { perform(action) }
    }

    func perform(_ action: Player.Action) {
        switch action {
        case .index(let name):
            sendAll(follower.index(name, show: followedShow))
        case .decode(let request):
            submitDecode(request)
        case .cancel(let id):
            display.cancelDeferred(id)
            worker.cancel(id)
            mirrors?.showCancels(id)
        case .present(let frame, let id):
            let decode = decodes.removeValue(forKey: id)
            present(
                frame,
                PresentRecord(
                    category: id.category, slide: id.name, file: decode?.file, decodeMilliseconds: decode?.milliseconds,
                    why: player.playlist?.reason(of: id)?.rawValue, captions: decode?.captions ?? []), id: id)
        case .showBackground:
            display.show(.background(renderOptions.background))
            mirrors?.showShowsBackground()
        case .timer(.arm(let deadline, let generation)):
            armedGeneration = generation
            armedDeadline = deadline
            timer.arm(at: deadline)
        case .timer(.disarm):
            armedGeneration = nil
            armedDeadline = nil
            timer.disarm()
        case .inputHold(let until):
            if let until { inputHoldTimer.arm(at: until) } else { inputHoldTimer.disarm() }
        case .announce(let line):
            log("showing: \(line)")
            overlay.announce(line, now: MonotonicClock.seconds())
            mirrors?.announce(line, now: MonotonicClock.seconds())
        case .showPairingCode:
            guard let web = house.web else { return }
            let url = web.pairingURL()
            guard let code = QRCodeEncoder.matrix(for: url) else { return }
            log("showing the web remote's pairing code for \(Int(TextOverlay.pairingSeconds)) s")
            overlay.showPairingCode(code, now: MonotonicClock.seconds())
        case .quit:
            house.exitStatus = 0
        case .screenPower(let on):
            // The screen going off is the end of the day for most frames: the slide is saved now, not in up to
            // half an hour, and a power cut at night loses nothing.
            if !on { position?.save() }
            display.setPower(on)
            mirrors?.setPower(on)
            let now = MonotonicClock.seconds()
            // The TV on the CEC adapter's port follows the show on that port (the first screen's).
            if self === house.show {
                house.applyCEC(house.cec?.screen(on: on, now: now), now: now)
            }
        case .log(let line):
            log(line)
        case .warn(let line):
            log(.warning, line)
        case .playClip(let request):
            playClip(request)
        case .clip(let command):
            clipCommand(command, now: MonotonicClock.seconds())
        case .saveFavourites(let favourites):
            if let store = house.favouritesStore {
                store.save(favourites)
            } else {
                log("no favouritesFile (and no state folder): the stars last until the player stops")
            }
        }
    }

    /// A new slide: a crossfade from the one on screen when fades are on and the screen can show one, else a cut.
    func present(_ frame: Frame, _ record: PresentRecord, id: SlideID) {
        display.present(frame, record, now: MonotonicClock.seconds())
        mirrors?.showPresents(frame, record, id: id)
        // The links' picture is the first screen's (MQTT's image topic, the web remote's page); another show's is
        // made while the web remote is there to show it.
        if self === house.show {
            if !house.submitSlidePicture() { house.slidePictures.forget() }
        } else {
            makePicture()
        }
    }

    private func deliver(_ outcome: DecodeWorker.Outcome, now: Double) {
        switch outcome.result {
        case .success(let frame):
            for warning in outcome.warnings { log(.warning, warning) }
            decodes[outcome.request.slide.id] = (outcome.file, outcome.seconds * 1000, outcome.captions)
            house.figures.recordDecode(seconds: outcome.seconds)
            send(.decoded(outcome.request, frame, now: now))
        case .failure(let error):
            house.figures.filesSkipped += 1
            send(.decodeFailed(outcome.request, message: "\(error)", now: now))
            follower.healIfRefusedForMemory(error, slide: outcome.request.slide)
        }
    }

    /// The picture of this show's slide for the web remote (another screen's than the first, whose picture MQTT
    /// shares), made while the web remote is on.
    func makePicture() {
        guard house.web != nil else {
            pictures?.forget()
            return
        }
        if pictures == nil {
            pictures = SlidePictures(loop: house.loop, log: log) { [unowned self] _, _ in house.web?.slidePictureMade()
            }
        }
        if pictures?.make(from: display.screen.slideFrame) != true { pictures?.forget() }
    }

    /// Puts the text that should be over the picture there, or takes it away; waits while a flip is in flight, a
    /// fade runs or the screen is dark.
    func refreshOverlay() {
        refreshMirrorOverlays()
        // A clip's pictures follow each other on every vblank or two: text over one would be gone with the next
        // (the corner is painted into each; a banner waits for the clip to pause or end).
        guard display.isLit, !display.isBusy, !display.screen.isFading, clipPlayback?.held ?? true else { return }
        let paused = player.timer.reasons.contains(.user)
        // Without a photo the screen says where they are to come from (a first start with an empty cache).
        let noPhotos = player.categories.isEmpty || player.playlist?.isEmpty == true
        overlay.notice = noPhotos ? house.syncs?.notice(now: MonotonicClock.seconds()) : nil
        if overlay.wantsText(paused: paused), overlay.renderer == nil { loadBannerFont() }
        overlay.refresh(
            paused: paused, canvas: profileNow.compose, rotation: profileNow.rotation, show: { display.show($0) })
    }

    /// The mirrored screens' text: the show's banner, pause sign, notice and corner.
    private func refreshMirrorOverlays() {
        guard let mirrors else { return }
        let paused = player.timer.reasons.contains(.user)
        let noPhotos = player.categories.isEmpty || player.playlist?.isEmpty == true
        let notice = noPhotos ? house.syncs?.notice(now: MonotonicClock.seconds()) : nil
        for screen in mirrors.screens {
            screen.refreshOverlay(paused: paused, notice: notice, cornerLines: overlay.cornerLines, house: house)
        }
    }

    /// The banner's renderer, asked for once, when the first banner or pause sign is due.
    private func loadBannerFont() {
        guard !bannerFontAsked else { return }
        bannerFontAsked = true
        house.loadBannerFont(settings: settings, canvas: profileNow.compose, into: overlay) { [unowned self] in
            refreshOverlay()
        }
    }

    /// Takes what the display did since the last look (content done, a picture back, a redraw asked for, the seat
    /// given up) until it has nothing more to say.
    func drainDisplay() {
        mirrors?.drain()
        while true {
            let outputs = display.takeOutputs()
            if outputs.isEmpty { return }
            for output in outputs {
                let now = MonotonicClock.seconds()
                switch output {
                case .completed(.frame(let frame, let record), let visible, let at) where record.clipTime != nil:
                    clipPictureDone(frame, visible: visible, at: at, now: now)
                case .completed(let content, let visible, let at):
                    completed(content.shown, visible: visible, now: min(at, now))
                case .reappeared:
                    // A picture painted for the return has the corner painted in (`display.corner`); the rest follows.
                    break
                case .redraw:
                    send(.redraw(now: now))
                case .seatReleased:
                    house.seatReleased(by: ObjectIdentifier(self))
                case .prefetchesReleased(let requests):
                    for request in requests { submitDecode(request) }
                }
            }
        }
    }

    /// Content is done: on the glass, or taken while the screen is dark (which counts for the show: the slide is
    /// the one the screen will show when it is lit).
    private func completed(_ shown: ShownContent, visible: Bool, now: Double) {
        if shown.isPicture { house.pictureShown(on: self) }
        if case .blend = shown {
            // The fade hurries to its end when the viewer already asked for another slide.
            display.feedFade(now: now, hurry: player.hasPictureWaiting)
            return
        }
        guard case .frame(let record) = shown else { return }
        clipPosterShown(record, now: now)
        presentedCount += 1
        position?.shown(
            SlideID(category: record.category, name: record.slide), selection: player.playlist?.savedSelection(),
            now: now)
        house.figures.slidesShown += 1
        house.figures.lastSlideTime = WallClock.seconds()
        if house.configuration.stats { logStats(record, now: now) }
        advanceDeadline = nil
        // Before the flip is told done: that may put the next slide on the glass at once (one already decoded and
        // due), and `--exit-after N` means N slides, not N and whatever the same turn presents.
        if house.presentedEnough(by: self) { return }
        send(.flipDone(now: now))
    }
}
