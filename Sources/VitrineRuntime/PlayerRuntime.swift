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

/// The player thread: one epoll loop over the slide timer, signals, decode results, inotify, the display's
/// vblank and the control socket. It owns the `Player` state machine, feeds it events and carries out its
/// actions; decoding happens on the worker thread.
public final class PlayerRuntime {
    /// Client tokens start here, plus the client's descriptor.
    /// The previous slide is kept too only when, after everything else, the budget still has this much room
    /// for a progressive decode (whose coefficients libjpeg must hold whole).
    static let progressiveReserve = 96 << 20

    var configuration: PlayConfiguration
    package let log: EventLog
    /// The service manager (systemd), when one started the player and listens.
    private let notifier: ServiceNotifier?
    private var toldReady = false
    private let watchdogTimer: MonotonicTimer
    let metricsTimer: MonotonicTimer
    var metricsWriter: MetricsWriter?
    var figures = MetricsWriter.Figures()
    /// Saves the slide on screen for a restart, when a position file is set.
    let position: PositionKeeper?
    let favouritesStore: FavouritesStore?
    package let library: Library
    let profile: DeviceProfile
    public let budget: MemoryBudget
    var renderOptions: RenderOptions
    /// The place index `{place}` captions are looked up in, opened only when the caption has `{place}`.
    var places: PlaceIndex?
    var player: Player
    let loop: EventLoop
    let timer: MonotonicTimer
    let signals: SignalSource
    let worker: DecodeWorker
    /// The category list, indexing, inotify and the rendition cache.
    let follower: LibraryFollower
    let display: DisplayController
    let hotplug: HotplugMonitor?
    var terminal: VirtualTerminal?
    /// The VT's registration in the loop (a hangup replaces its descriptor).
    private var terminalSource: EventLoop.Source?
    var input: InputSource?
    private let inputHoldTimer: MonotonicTimer
    var inputRouter: InputRouter
    /// GPIO buttons, the motion sensor and the room's presence; nil when the settings have none of them.
    var presenceAndButtons: PresenceAndButtons?
    /// The MQTT broker (Home Assistant, a fleet); nil without `mqtt` settings or when they cannot be used.
    var mqtt: MQTTLink?
    /// The slide on screen, the playlist's size and the slide's number in it, as last told to the broker.
    var mqttPosition: (slide: SlideID?, count: Int, position: Int?)?
    /// HDMI-CEC to the TV; nil without `cec` settings or without an adapter to use.
    var cec: CECLink?
    /// The web remote; nil without `web` settings or when it cannot listen.
    var web: WebRemote?
    /// The sources' syncs; nil without sources.
    var syncs: SourceSyncs?
    /// Syncs asked to stop by a reload, reaped once they have ended.
    var stoppedSyncs: [ChildProcess] = []
    /// Loads the libraries of a link turned on once the loop runs, and makes the text renderers, off the loop.
    lazy var libraryLoader = LibraryLoader(loop: loop, log: log)
    /// The banner's font has been asked for (`loadBannerFont`).
    var bannerFontAsked = false
    /// Counts the corners asked for: a corner made for an older request (before another replug) is dropped.
    var cornerRequests = 0
    /// The picture of the slide on screen, made once for both MQTT's image topic and the web remote's page.
    lazy var slidePictures = SlidePictures(loop: loop, log: log) { [unowned self] result, now in
        mqtt?.slidePicture(result, now: now)
        web?.slidePictureMade()
    }
    /// Text over the picture: the category banner for a few seconds, else the pause sign while paused by the user;
    /// the corner's clock, date and texts.
    let overlay: TextOverlay
    /// The corner's lines as they should be now; nil without an `overlay` section.
    var live: LiveOverlay?
    /// Whether the screen was lit at the last turn, as the clock was told.
    var clockSeesScreen: Bool?
    /// The screen was unplugged; the show holds (screen-off reason) until it is back.
    var unplugged = false
    var profileNow: DeviceProfile
    let screenDescription: String
    let control: ControlServer?
    /// The web remote is to be made anew with the settings (a reload moved it), once the loop's turn is over.
    var webRestartDue = false
    let scheduleTimer: WallClockTimer
    /// When the day-part in force (or none) gives way to another, local time; nil when nothing changes soon.
    var dayPartUntil: LocalMinute?
    private var armedGeneration: Int?
    private var armedDeadline: Double?
    /// The deadline that made the show advance, until the slide it asked for is on screen (for `--stats`).
    var advanceDeadline: Double?
    var decodes: [SlideID: (file: String?, milliseconds: Double, captions: [String?])] = [:]
    var presentedCount = 0
    var sleep = SleepDetector(offset: SleepClock.offset(), suspendCount: SleepClock.suspendCount())
    var exitStatus: Int32?
    /// The longest time the loop spent on one wake-up since the last `status` (a flip or a key waits that long).
    var longestTurn = 0.0
    /// The clip on screen as it plays; nil while a photo is shown.
    var clipPlayback: ClipPlayback?
    /// When the clip's next picture is due; and the bell its stream rings.
    let clipTimer: MonotonicTimer
    let clipWakeup: Wakeup
    /// How the last clip played (`status`).
    var clipFigures: ClipPacer.Figures?
    /// A fade holds the outgoing and the incoming frame, and a decode the viewer asks for during it a third; they
    /// are on top of the minimum (two scanout buffers and one frame), with this much left for decoding.
    static let fadeDecodeRoom = 16 << 20

    /// Sets everything up; a problem the user must fix (budget too small, socket in use, library missing) is
    /// thrown as one line.
    public init(configuration: PlayConfiguration, log: EventLog) throws(PlayError) {
        self.configuration = configuration
        self.log = log
        let settings = configuration.settings
        library = Library(root: settings.library)
        let notifier = ServiceNotifier.fromEnvironment()
        self.notifier = notifier
        // Signals are taken as data from here on, before any wait (for a screen to be plugged in, too), so a
        // SIGTERM or SIGHUP then is handled, not the default end of the process.
        let signals: SignalSource
        do {
            signals = try SignalSource([
                SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCONT, VirtualTerminal.releaseSignal, VirtualTerminal.acquireSignal,
            ])
        } catch {
            throw PlayError("\(error)")
        }
        self.signals = signals
        let opened = try DisplayOpener.open(configuration, log: log, notifier: notifier, signals: signals)
        profile = opened.profile
        let budgetMiB = settings.memoryBudgetMiB ?? profile.memoryBudgetMiB
        budget = MemoryBudget(limit: budgetMiB << 20)
        let needed = profile.minimumBudgetBytes
        guard budget.limit >= needed else {
            opened.device?.close()
            let source = settings.memoryBudgetMiB != nil ? "memoryBudgetMiB" : "the \(profile.id) profile's budget"
            throw PlayError(
                "memory budget \(budgetMiB) MiB (\(source)) is below the \(MemoryBudget.format(needed)) that two "
                    + "\(profile.scanout) scanout buffers and one \(profile.compose) frame need")
        }
        places = Self.openPlaces(settings, keeping: nil, log: log)
        renderOptions = Self.renderOptions(settings, profile: profile, places: places)
        let positionStore = PositionStore.path(settings: settings).map { PositionStore(path: $0) }
        do {
            favouritesStore = try FavouritesStore.path(settings: settings).map { (path) throws(RuntimeError) in
                try FavouritesStore(path: path, log: log)
            }
        } catch {
            throw PlayError("\(error)")
        }
        var resume: SlideID?
        var resumeSelection: SelectionState?
        if let saved = positionStore?.load(), saved.library == library.root, !configuration.ignoresSavedPosition {
            resume = saved.slide
            resumeSelection = saved.selection
        }
        let frameBytes = profile.compose.xrgbByteCount ?? 0
        let fades = Self.fadeSeconds(
            settings, profile: profile, budget: budget, blendsCleanly: opened.fbdev?.blendsCleanly ?? true,
            screen: opened.description, log: log)
        let fadeFrames = fades == nil ? 0 : frameBytes
        let scanoutBytes = profile.scanout.xrgbByteCount ?? Int.max / 4
        let fadeNeeds = needed + 2 * frameBytes + Self.fadeDecodeRoom
        var scanoutBuffers = 2
        if fades != nil, opened.fbdev == nil, budget.limit - fadeNeeds >= scanoutBytes {
            let refresh = max(opened.mode?.refresh ?? 60, 1)
            let step = FrameBlender.stepSeconds(at: profile.compose, clock: MonotonicClock.seconds)
            scanoutBuffers = Self.fadeBuffers(stepSeconds: step, refreshHz: refresh)
            log(
                "crossfades: a step blends in \(JSONText.number(step * 1000)) ms of a "
                    + "\(JSONText.number(1000 / Double(refresh))) ms frame here: \(scanoutBuffers) scanout buffers")
        }
        let thirdBuffer = scanoutBuffers == 3 ? scanoutBytes : 0
        let keepPrevious =
            budget.limit - needed - frameBytes - fadeFrames - thirdBuffer >= Self.progressiveReserve + frameBytes
        player = Player(
            options: Player.Options(
                interval: settings.interval, order: settings.order, startCategory: settings.startCategory,
                keepPrevious: keepPrevious, seed: UInt64(truncatingIfNeeded: Int(MonotonicClock.seconds() * 1e6)),
                pauseOnInput: settings.pauseOnInput, transitionSeconds: fades ?? 0, resume: resume,
                wakeOutsideSchedule: settings.presence?.wakeOutsideSchedule ?? false, mix: settings.mix,
                pairPortraits: settings.pairPortraits && profile.compose.width > profile.compose.height,
                resumeSelection: resumeSelection, dayPartHold: settings.dayParts?.hold),
            favourites: favouritesStore?.load(rating: settings.favouriteRating)
                ?? Favourites(rating: settings.favouriteRating))
        inputRouter = InputRouter(
            gestures: GestureRecognizer(
                rotation: profile.rotation, physicalSize: opened.connector?.physicalSizeMillimetres,
                pixelSize: profile.scanout))
        let crashGuard = CrashGuard(folder: StateDirectory.path)
        for note in crashGuard.notes { log(.warning, note) }
        do {
            // Both only change process settings and cannot fail for these arguments (sigaction of SIGPIPE, mallopt).
            _ = vitrine_ignore_sigpipe()
            _ = vitrine_return_large_blocks()
            loop = try EventLoop()
            timer = try MonotonicTimer()
            follower = try LibraryFollower(settings: settings, profile: profile, log: log, crashGuard: crashGuard)
            let snapshots = try configuration.snapshots.map { (directory) throws(RuntimeError) in
                try SnapshotWriter(directory: directory, started: MonotonicClock.seconds())
            }
            let executor: any DisplayExecutor
            if let fbdev = opened.fbdev {
                executor = fbdev
            } else if let device = opened.device, let connector = opened.connector, let mode = opened.mode {
                executor = try DRMDisplay(
                    device: device, connector: connector, mode: mode, budget: budget, bufferCount: scanoutBuffers,
                    log: log)
            } else {
                do {
                    executor = try HeadlessDisplay(
                        size: profile.scanout, budget: budget, bufferCount: scanoutBuffers, snapshots: snapshots)
                } catch {
                    throw PlayError("\(error)")
                }
            }
            display = try DisplayController(executor: executor, fadeSeconds: fades, log: log)
            // Like the other links, a control socket that cannot be made is one log line: the show matters more.
            do {
                control = try ControlServer(path: configuration.controlPath ?? ControlServer.defaultPath())
            } catch {
                control = nil
                log(.warning, "no control socket (vitrine ctl will not reach this player): \(error)")
            }
            scheduleTimer = try WallClockTimer()
            inputHoldTimer = try MonotonicTimer()
            overlay = try TextOverlay()
            watchdogTimer = try MonotonicTimer()
            metricsTimer = try MonotonicTimer()
            clipTimer = try MonotonicTimer()
            clipWakeup = try Wakeup()
            let root = Library(root: settings.library).root
            position = try positionStore.map { (store) throws(RuntimeError) in
                try PositionKeeper(
                    store: store, library: root, spacing: settings.positionSaveInterval, log: log)
            }
        } catch let error as RuntimeError {
            throw PlayError("\(error)")
        } catch let error as PlayError {
            throw error
        } catch {
            throw PlayError("\(error)")
        }
        do {
            worker = try DecodeWorker(
                budget: budget, options: renderOptions, fontPath: settings.fontPath ?? TextRenderer.defaultFont,
                crashGuard: crashGuard)
        } catch {
            throw PlayError("\(error)")
        }
        screenDescription = opened.description
        profileNow = profile
        metricsWriter = settings.metricsFile.map { MetricsWriter(path: $0) }
        figures.budgetLimitBytes = budget.limit
        figures.startTime = WallClock.seconds()
        // VT switching matters only when Vitrine drives the screen itself and runs on a VT.
        let onScreen = display.executor is DRMDisplay || display.executor is FbdevDisplay
        if onScreen {
            terminal = VirtualTerminal(allowSwitching: settings.display.vtSwitching, log: log)
            if let terminal { log("on \(terminal.path): switching VTs holds the show and gives the screen away") }
        }
        // Input is for a real screen; a headless player takes its commands from the control socket.
        if onScreen {
            do {
                let source = try InputSource()
                input = source
                if let problem = source.permissionProblem() { log(.warning, problem) }
            } catch {
                log(.warning, "keys and touch will not work: \(error)")
            }
        }
        // Hotplug matters only for a real screen; without udev the show still runs, it just cannot follow plugs.
        if display.executor is DRMDisplay {
            do {
                hotplug = try HotplugMonitor()
            } catch {
                log(.warning, "screens plugged in or out will not be noticed: \(error)")
                hotplug = nil
            }
        } else {
            hotplug = nil
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

    /// The place index for a caption with `{place}` (nil otherwise): `current` again when it is the same file, else
    /// the file mapped anew (only its header is read here; the decode worker reads the records it needs). Without
    /// an index, or with one that cannot be read, the show goes on with `{place}` empty, which the log says once.
    static func openPlaces(_ settings: Settings, keeping current: PlaceIndex?, log: EventLog) -> PlaceIndex? {
        guard settings.caption.template.uses(.place) else { return nil }
        guard let path = PlaceIndex.path(settings: settings) else {
            log(
                .warning,
                "the caption has {place}, but there is no place index (placesFile, or "
                    + "\(PlaceIndex.installedPaths().joined(separator: ", "))): it stays empty")
            return nil
        }
        if let current, current.file == path { return current }
        do {
            let index = try PlaceIndex.load(path: path)
            log("place names from \(path) (\(index.placeCount) places)")
            return index
        } catch {
            log(.warning, "\(error); {place} stays empty")
            return nil
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

    /// With fades, a third scanout buffer only where a step's blend takes more than half a frame (a Pi Zero at
    /// 1080p, a guest under emulation): the next step is then painted while the last one's flip is in flight, so it
    /// still makes every vblank. Where blending is quick, two buffers make every vblank too (the step is painted
    /// between a flip's completion and the next vblank), and the third would be a whole frame held for nothing.
    package static func fadeBuffers(stepSeconds: Double, refreshHz: Int) -> Int {
        stepSeconds > 0.5 / Double(max(refreshHz, 1)) ? 3 : 2
    }

    public var controlPath: String? { control?.path }

    /// Portrait pairs only make sense on a landscape canvas.
    private var pairsPortraits: Bool {
        configuration.settings.pairPortraits && profileNow.compose.width > profileNow.compose.height
    }

    /// Plays until a signal or `--exit-after` ends the show. Returns the exit status.
    public func run() -> Int32 {
        do {
            try registerSources()
        } catch {
            log(.error, "\(error)")
            return 1
        }
        log(
            "playing \(library.root) on \(screenDescription) (profile \(profile.id), compose \(profile.compose), "
                + "budget \(MemoryBudget.format(budget.limit)))" + (control.map { ", control socket \($0.path)" } ?? "")
        )
        if let snapshots = display.snapshots { log("presented frames go to \(snapshots.directory)/") }
        presenceAndButtons = PresenceAndButtons.start(
            settings: configuration.settings, in: loop, now: MonotonicClock.seconds(), log: log
        ) { [unowned self] events in sendAll(events) }
        display.corner = (overlay, profileNow.compose, profileNow.rotation)
        startOverlay(configuration.settings)
        startMQTT(configuration.settings)
        startCEC(configuration.settings)
        startWeb(configuration.settings)
        startSyncs(configuration.settings)
        // What the player costs before its first photo: the screen's buffers, the links, the code they run.
        if configuration.stats { logStartStats() }
        send(.start(categories: follower.start(now: MonotonicClock.seconds()), now: MonotonicClock.seconds()))
        followSchedule()
        drainDisplay()
        // The pings come from this loop, so a player stuck anywhere in it is restarted by the service manager.
        if notifier?.watchdogInterval != nil { watchdogTimer.arm(at: MonotonicClock.seconds()) }
        if metricsWriter != nil { metricsTimer.arm(at: MonotonicClock.seconds()) }
        libraryLoader.loopRunning = true
        while exitStatus == nil {
            let ready = loop.wait()
            let woke = MonotonicClock.seconds()
            defer { longestTurn = max(longestTurn, MonotonicClock.seconds() - woke) }
            // Before anything that woke us: a deadline that passed while the system slept must not advance the show.
            noticeSleep()
            for event in ready {
                guard loop.dispatch(event) else { continue }
                drainDisplay()
                if exitStatus != nil { break }
            }
            if webRestartDue {
                webRestartDue = false
                web?.close()
                web = nil
                startWeb(configuration.settings)
            }
            if !stoppedSyncs.isEmpty { stoppedSyncs.removeAll { $0.reap() != nil } }
            followOverlay()
            refreshOverlay()
            drainDisplay()
            tellMQTT()
        }
        shutdown()
        return exitStatus ?? 0
    }

    private func shutdown() {
        notifier?.send("STOPPING=1")
        position?.saveAndWait()
        favouritesStore?.finish()
        writeMetrics()
        // The screen first (the console back at once), then the worker, which may be in the middle of a photo.
        display.close()
        terminal?.close()
        presenceAndButtons?.close()
        mqtt?.close()
        cec?.close()
        web?.close()
        // Not waited for: systemd (or init) collects a sync still ending after the player.
        _ = syncs?.close()
        stopClip()
        slidePictures.stop()
        libraryLoader.stop()
        worker.stop()
        follower.stop()
        control?.close()
        loop.close()
    }

    /// The runtime's own descriptors, each with its handler; the parts (the follower, the links, the overlay,
    /// buttons and presence) register theirs as they start.
    private func registerSources() throws(RuntimeError) {
        try loop.add(timer.descriptor) { [unowned self] _ in slideTimerFired(now: MonotonicClock.seconds()) }
        try loop.add(signals.descriptor) { [unowned self] _ in
            let now = MonotonicClock.seconds()
            for signal in signals.take() where exitStatus == nil { handleSignal(signal, now: now) }
        }
        try loop.add(worker.wakeup.descriptor) { [unowned self] _ in
            let now = MonotonicClock.seconds()
            for outcome in worker.takeOutcomes() { deliver(outcome, now: now) }
        }
        try follower.register(in: loop, show: { [unowned self] in followedShow }) { [unowned self] found in
            sendAll(found)
        }
        for descriptor in display.eventDescriptors {
            try loop.add(descriptor) { [unowned self] _ in display.handleReadable(now: MonotonicClock.seconds()) }
        }
        try control?.attach(to: loop) { [unowned self] line in answer(line) }
        try loop.add(scheduleTimer.descriptor) { [unowned self] _ in
            if scheduleTimer.acknowledge() {
                // The wall clock jumped: the system resumed (or the clock was set, which costs only a fresh
                // interval). The suspend counter may not have moved yet, so do not wait for it.
                wokeFromSleep("the wall clock jumped (resume from sleep, or the clock was set)")
            }
            followSchedule()
        }
        if let hotplug {
            try loop.add(hotplug.descriptor) { [unowned self] _ in
                if hotplug.takeChanges() { screenChanged(now: MonotonicClock.seconds()) }
            }
        }
        if let input {
            try loop.add(input.descriptor) { [unowned self] _ in
                let now = MonotonicClock.seconds()
                for event in input.read() { handleInput(event, now: now) }
            }
        }
        try loop.add(clipTimer.descriptor) { [unowned self] _ in
            if clipTimer.acknowledge() { pumpClip(now: MonotonicClock.seconds()) }
        }
        try loop.add(clipWakeup.descriptor) { [unowned self] _ in clipStreamRang(now: MonotonicClock.seconds()) }
        try loop.add(inputHoldTimer.descriptor) { [unowned self] _ in
            if inputHoldTimer.acknowledge() { send(.inputHoldEnded(now: MonotonicClock.seconds())) }
        }
        try loop.add(overlay.descriptor) { [unowned self] _ in overlay.timerFired(now: MonotonicClock.seconds()) }
        try loop.add(watchdogTimer.descriptor) { [unowned self] _ in
            watchdogTimer.acknowledge()
            guard let notifier, let interval = notifier.watchdogInterval else { return }
            notifier.send("WATCHDOG=1")
            watchdogTimer.arm(at: MonotonicClock.seconds() + interval)
        }
        try loop.add(metricsTimer.descriptor) { [unowned self] _ in
            metricsTimer.acknowledge()
            writeMetrics()
            metricsTimer.arm(at: MonotonicClock.seconds() + configuration.settings.metricsInterval)
        }
        if let position { try loop.add(position.descriptor) { _ in position.timerFired() } }
        try watchTerminal()
    }

    /// The VT's descriptor, again after a hangup replaced it.
    private func watchTerminal() throws(RuntimeError) {
        loop.remove(terminalSource)
        terminalSource = nil
        guard let terminal else { return }
        terminalSource = try loop.add(terminal.descriptor) { [unowned self] _ in
            guard terminal.service() != nil else { return }
            do {
                try watchTerminal()
            } catch {
                log(.warning, "\(error)")
            }
        }
    }

    private func slideTimerFired(now: Double) {
        timer.acknowledge()
        guard let generation = armedGeneration else { return }
        // An expiry seconds after its deadline means the system slept through it (s2idle keeps CLOCK_MONOTONIC
        // running, and its suspend counter may be updated only after user space runs again): no catch-up.
        if let deadline = armedDeadline, SleepDetector.firedLate(deadline: deadline, now: now),
            wokeFromSleep("the slide timer fired \(Int(now - deadline)) s late: the system slept")
        {
            return
        }
        advanceDeadline = armedDeadline
        send(.timerFired(generation: generation, now: now))
    }

    package func send(_ event: Player.Event) {
        perform(player.handle(event))
    }

    func sendAll(_ events: [Player.Event]?) {
        for event in events ?? [] { send(event) }
    }

    /// What the show plays, for the library follower at each call.
    var followedShow: LibraryFollower.Show {
        LibraryFollower.Show(
            active: player.active, playlist: player.playlist, order: player.options.order,
            pairPortraits: pairsPortraits,
            minRating: configuration.settings.minRating)
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
        case .present(let frame, let id):
            let decode = decodes.removeValue(forKey: id)
            present(
                frame,
                PresentRecord(
                    category: id.category, slide: id.name, file: decode?.file, decodeMilliseconds: decode?.milliseconds,
                    why: player.playlist?.reason(of: id)?.rawValue, captions: decode?.captions ?? []))
        case .showBackground:
            display.show(.background(renderOptions.background))
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
        case .showPairingCode:
            guard let web else { return }
            let url = web.pairingURL()
            guard let code = QRCodeEncoder.matrix(for: url) else { return }
            log("showing the web remote's pairing code for \(Int(TextOverlay.pairingSeconds)) s")
            overlay.showPairingCode(code, now: MonotonicClock.seconds())
        case .quit:
            exitStatus = 0
        case .screenPower(let on):
            display.setPower(on)
            let now = MonotonicClock.seconds()
            applyCEC(cec?.screen(on: on, now: now), now: now)
        case .log(let line):
            log(line)
        case .warn(let line):
            log(.warning, line)
        case .playClip(let request):
            playClip(request)
        case .clip(let command):
            clipCommand(command, now: MonotonicClock.seconds())
        case .saveFavourites(let favourites):
            if let favouritesStore {
                favouritesStore.save(favourites)
            } else {
                log("no favouritesFile (and no state folder): the stars last until the player stops")
            }
        }
    }

    /// A new slide: a crossfade from the one on screen when fades are on and the screen can show one, else a cut.
    func present(_ frame: Frame, _ record: PresentRecord) {
        display.present(frame, record, now: MonotonicClock.seconds())
        if !submitSlidePicture() { slidePictures.forget() }
    }

    private func deliver(_ outcome: DecodeWorker.Outcome, now: Double) {
        switch outcome.result {
        case .success(let frame):
            for warning in outcome.warnings { log(.warning, warning) }
            decodes[outcome.request.slide.id] = (outcome.file, outcome.seconds * 1000, outcome.captions)
            figures.recordDecode(seconds: outcome.seconds)
            send(.decoded(outcome.request, frame, now: now))
        case .failure(let error):
            figures.filesSkipped += 1
            send(.decodeFailed(outcome.request, message: "\(error)", now: now))
            follower.healIfRefusedForMemory(error, slide: outcome.request.slide)
        }
    }

    /// Puts the text that should be over the picture there, or takes it away; waits while a flip is in flight, a
    /// fade runs or the screen is dark.
    private func refreshOverlay() {
        // A clip's pictures follow each other on every vblank or two: text over one would be gone with the next
        // (the corner is painted into each; a banner waits for the clip to pause or end).
        guard display.isLit, !display.isBusy, !display.screen.isFading, clipPlayback?.held ?? true else { return }
        let paused = player.timer.reasons.contains(.user)
        // Without a photo the screen says where they are to come from (a first start with an empty cache).
        let noPhotos = player.categories.isEmpty || player.playlist?.isEmpty == true
        overlay.notice = noPhotos ? syncs?.notice(now: MonotonicClock.seconds()) : nil
        if overlay.wantsText(paused: paused), overlay.renderer == nil { loadBannerFont() }
        overlay.refresh(
            paused: paused, canvas: profileNow.compose, rotation: profileNow.rotation, show: { display.show($0) })
    }

    /// The banner's renderer, made when the first banner or pause sign is due (most shows never put text on screen,
    /// and FreeType with its font is a megabyte of the player's memory): FreeType and the font are read on a worker,
    /// and the text follows on the loop a moment later. Tried once; a font that cannot be loaded is one warning.
    private func loadBannerFont() {
        guard !bannerFontAsked else { return }
        bannerFontAsked = true
        let fontPath = configuration.settings.fontPath ?? TextRenderer.defaultFont
        let pixelHeight = max(12, profileNow.compose.height / 16)
        libraryLoader.make({ () throws(FileError) in try TextRenderer(fontPath: fontPath, pixelHeight: pixelHeight) }) {
            [unowned self] result in
            switch result {
            case .success(let renderer):
                overlay.renderer = renderer
                refreshOverlay()
            case .failure(let error):
                log(.warning, "no on-screen text (\(error)); banners go to the log only")
            }
        }
    }

    /// Takes what the display did since the last look (content done, a picture back, a redraw asked for, the seat
    /// given up) until it has nothing more to say.
    private func drainDisplay() {
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
                    terminal?.allowRelease()
                case .prefetchesReleased(let requests):
                    for request in requests { submitDecode(request) }
                }
            }
        }
    }

    /// Content is done: on the glass, or taken while the screen is dark (which counts for the show: the slide is
    /// the one the screen will show when it is lit).
    private func completed(_ shown: ShownContent, visible: Bool, now: Double) {
        if !toldReady, shown.isPicture {
            toldReady = true
            notifier?.send("READY=1\nSTATUS=playing \(library.root) on \(screenDescription)")
        }
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
        figures.slidesShown += 1
        figures.lastSlideTime = WallClock.seconds()
        if configuration.stats { logStats(record, now: now) }
        advanceDeadline = nil
        // Before the flip is told done: that may put the next slide on the glass at once (one already decoded and
        // due), and `--exit-after N` means N slides, not N and whatever the same turn presents.
        if let limit = configuration.exitAfter, presentedCount >= limit {
            log("presented \(presentedCount) slides; exiting as asked")
            exitStatus = 0
            return
        }
        send(.flipDone(now: now))
    }

}
