import CLinux
import VitrineCore
import VitrineImage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The player thread: one epoll loop over the slide timer, signals, decode results, inotify, the display's
/// vblank and the control socket. It owns the `Player` state machine, feeds it events and carries out its
/// actions; decoding happens on the worker thread.
public final class PlayerRuntime: LibraryFollowerOwner {
    enum Token: UInt64 {
        case timer = 1, signals, decodes, library, vblank, control, schedule, hotplug, input, inputHold, banner
        case watchdog, metrics, position, terminal, libraryCheck, rescan, indexes, renditions
        case mqttSocket, mqttAttempt, mqttHousekeeping, mqttRetry, mqttState, mqttImage
        case cecAdapter, cecTimer
        case webServer, webWorker, webSlide, webTimer
        case overlayMinute, overlayStale, overlayZone

        init(_ source: LiveOverlay.Source) {
            switch source {
            case .minute: self = .overlayMinute
            case .stale: self = .overlayStale
            case .zone: self = .overlayZone
            }
        }

        init(_ source: WebRemote.Source) {
            switch source {
            case .server: self = .webServer
            case .worker: self = .webWorker
            case .slide: self = .webSlide
            case .timer: self = .webTimer
            }
        }

        init(_ source: CECLink.Source) {
            switch source {
            case .adapter: self = .cecAdapter
            case .timer: self = .cecTimer
            }
        }

        init(_ source: MQTTLink.Source) {
            switch source {
            case .socket: self = .mqttSocket
            case .attempt: self = .mqttAttempt
            case .housekeeping: self = .mqttHousekeeping
            case .retry: self = .mqttRetry
            case .state: self = .mqttState
            case .image: self = .mqttImage
            }
        }

        var mqttSource: MQTTLink.Source? {
            switch self {
            case .mqttSocket: return .socket
            case .mqttAttempt: return .attempt
            case .mqttHousekeeping: return .housekeeping
            case .mqttRetry: return .retry
            case .mqttState: return .state
            case .mqttImage: return .image
            default: return nil
            }
        }

        init(_ source: LibraryFollower.Source) {
            switch source {
            case .watcher: self = .library
            case .rescan: self = .rescan
            case .libraryCheck: self = .libraryCheck
            case .indexes: self = .indexes
            case .renditions: self = .renditions
            }
        }

        /// The follower's source for its tokens.
        var librarySource: LibraryFollower.Source? {
            switch self {
            case .library: return .watcher
            case .rescan: return .rescan
            case .libraryCheck: return .libraryCheck
            case .indexes: return .indexes
            case .renditions: return .renditions
            default: return nil
            }
        }
    }

    /// Client tokens start here, plus the client's descriptor.
    static let clientTokenBase: UInt64 = 1000
    /// The previous slide is kept too only when, after everything else, the budget still has this much room
    /// for a progressive decode (whose coefficients libjpeg must hold whole).
    static let progressiveReserve = 96 << 20

    private var configuration: PlayConfiguration
    private let log: EventLog
    /// The service manager (systemd), when one started the player and listens.
    private let notifier: ServiceNotifier?
    private var toldReady = false
    private let watchdogTimer: MonotonicTimer
    private let metricsTimer: MonotonicTimer
    private var metricsWriter: MetricsWriter?
    private var figures = MetricsWriter.Figures()
    /// Saves the slide on screen for a restart, when a position file is set.
    private let position: PositionKeeper?
    private let library: Library
    private let profile: DeviceProfile
    public let budget: MemoryBudget
    private var renderOptions: RenderOptions
    private var player: Player
    private let loop: EventLoop
    private let timer: MonotonicTimer
    private let signals: SignalSource
    private let decodeWakeup: Wakeup
    private let worker: DecodeWorker
    /// The category list, indexing, inotify and the rendition cache.
    private let follower: LibraryFollower
    private let display: DisplayController
    private let hotplug: HotplugMonitor?
    private var terminal: VirtualTerminal?
    private var input: InputSource?
    private let inputHoldTimer: MonotonicTimer
    private var inputRouter: InputRouter
    /// GPIO buttons, the motion sensor and the room's presence; nil when the settings have none of them.
    private var presenceAndButtons: PresenceAndButtons?
    /// The MQTT broker (Home Assistant, a fleet); nil without `mqtt` settings or when they cannot be used.
    private var mqtt: MQTTLink?
    /// The slide on screen, the playlist's size and the slide's number in it, as last told to the broker.
    private var mqttPosition: (slide: SlideID?, count: Int, position: Int?)?
    /// HDMI-CEC to the TV; nil without `cec` settings or without an adapter to use.
    private var cec: CECLink?
    /// The web remote; nil without `web` settings or when it cannot listen.
    private var web: WebRemote?
    /// Text over the picture: the category banner for a few seconds, else the pause sign while paused by the user;
    /// the corner's clock, date and texts.
    private let overlay: TextOverlay
    /// The corner's lines as they should be now; nil without an `overlay` section.
    private var live: LiveOverlay?
    /// Whether the screen was lit at the last turn, as the clock was told.
    private var clockSeesScreen: Bool?
    /// The screen was unplugged; the show holds (screen-off reason) until it is back.
    private var unplugged = false
    private var profileNow: DeviceProfile
    private let screenDescription: String
    private let control: ControlServer?
    private let scheduleTimer: WallClockTimer
    private var armedGeneration: Int?
    private var armedDeadline: Double?
    /// The deadline that made the show advance, until the slide it asked for is on screen (for `--stats`).
    private var advanceDeadline: Double?
    private var decodes: [SlideID: (file: String?, milliseconds: Double)] = [:]
    private var presentedCount = 0
    private var sleep = SleepDetector(offset: SleepClock.offset(), suspendCount: SleepClock.suspendCount())
    private var exitStatus: Int32?
    /// The longest time the loop spent on one wake-up since the last `status` (a flip or a key waits that long).
    private var longestTurn = 0.0
    private let crossfader: Crossfader
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
        renderOptions = Self.renderOptions(settings, profile: profile)
        let positionStore = PositionStore.path(settings: settings).map { PositionStore(path: $0) }
        var resume: SlideID?
        if let saved = positionStore?.load(), saved.library == library.root, !configuration.ignoresSavedPosition {
            resume = saved.slide
        }
        let frameBytes = profile.compose.xrgbByteCount ?? 0
        let fades = Self.fadeSeconds(
            settings, profile: profile, budget: budget, blendsCleanly: opened.fbdev?.blendsCleanly ?? true,
            screen: opened.description, log: log)
        let fadeFrames = fades == nil ? 0 : frameBytes
        // With fades, a third scanout buffer when the budget has room beside what a fade holds: the next step is
        // painted while the last one's flip is in flight, so a blend that takes most of a frame still makes every
        // vblank.
        let scanoutBytes = profile.scanout.xrgbByteCount ?? Int.max / 4
        let fadeNeeds = needed + 2 * frameBytes + Self.fadeDecodeRoom
        let scanoutBuffers = fades != nil && opened.fbdev == nil && budget.limit - fadeNeeds >= scanoutBytes ? 3 : 2
        let thirdBuffer = scanoutBuffers == 3 ? scanoutBytes : 0
        let keepPrevious =
            budget.limit - needed - frameBytes - fadeFrames - thirdBuffer >= Self.progressiveReserve + frameBytes
        player = Player(
            options: Player.Options(
                interval: settings.interval, order: settings.order, startCategory: settings.startCategory,
                keepPrevious: keepPrevious, seed: UInt64(truncatingIfNeeded: Int(MonotonicClock.seconds() * 1e6)),
                pauseOnInput: settings.pauseOnInput, transitionSeconds: fades ?? 0, resume: resume,
                wakeOutsideSchedule: settings.presence?.wakeOutsideSchedule ?? false))
        crossfader = Crossfader(seconds: fades)
        let renderer: TextRenderer?
        do {
            renderer = try TextRenderer(
                fontPath: settings.fontPath ?? TextRenderer.defaultFont,
                pixelHeight: max(12, profile.compose.height / 16))
        } catch {
            log(.warning, "no on-screen text (\(error)); banners go to the log only")
            renderer = nil
        }
        inputRouter = InputRouter(
            gestures: GestureRecognizer(
                rotation: profile.rotation, physicalSize: opened.connector?.physicalSizeMillimetres,
                pixelSize: profile.scanout))
        do {
            _ = vitrine_ignore_sigpipe()
            _ = vitrine_return_large_blocks()
            loop = try EventLoop()
            timer = try MonotonicTimer()
            decodeWakeup = try Wakeup()
            follower = try LibraryFollower(settings: settings, profile: profile, log: log)
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
            display = try DisplayController(executor: executor, log: log)
            control = try ControlServer(path: configuration.controlPath ?? ControlServer.defaultPath())
            scheduleTimer = try WallClockTimer()
            inputHoldTimer = try MonotonicTimer()
            overlay = try TextOverlay(renderer: renderer)
            watchdogTimer = try MonotonicTimer()
            metricsTimer = try MonotonicTimer()
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
        worker = DecodeWorker(
            budget: budget, options: renderOptions, wakeup: decodeWakeup,
            fontPath: settings.fontPath ?? TextRenderer.defaultFont)
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

    static func renderOptions(_ settings: Settings, profile: DeviceProfile) -> RenderOptions {
        var caption = settings.caption
        caption.locale = settings.locale ?? DateStyle.processDefault()
        var options = RenderOptions(
            canvas: profile.compose, fit: settings.fit ?? profile.fit, rotation: profile.rotation,
            background: settings.background, maxMegapixels: settings.maxMegapixels, caption: caption)
        options.colorManagement = settings.colorManagement
        return options
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

    public var controlPath: String? { control?.path }

    /// Portrait pairs only make sense on a landscape canvas.
    private var pairsPortraits: Bool {
        configuration.settings.pairPortraits && profileNow.compose.width > profileNow.compose.height
    }

    /// Plays until a signal or `--exit-after` ends the show. Returns the exit status.
    public func run() -> Int32 {
        do {
            try loop.add(timer.descriptor, token: Token.timer.rawValue)
            try loop.add(signals.descriptor, token: Token.signals.rawValue)
            try loop.add(decodeWakeup.descriptor, token: Token.decodes.rawValue)
            for (descriptor, source) in follower.descriptors {
                try loop.add(descriptor, token: Token(source).rawValue)
            }
            for descriptor in display.eventDescriptors { try loop.add(descriptor, token: Token.vblank.rawValue) }
            if let control { try loop.add(control.descriptor, token: Token.control.rawValue) }
            try loop.add(scheduleTimer.descriptor, token: Token.schedule.rawValue)
            if let hotplug { try loop.add(hotplug.descriptor, token: Token.hotplug.rawValue) }
            if let input { try loop.add(input.descriptor, token: Token.input.rawValue) }
            try loop.add(inputHoldTimer.descriptor, token: Token.inputHold.rawValue)
            try loop.add(overlay.descriptor, token: Token.banner.rawValue)
            try loop.add(watchdogTimer.descriptor, token: Token.watchdog.rawValue)
            try loop.add(metricsTimer.descriptor, token: Token.metrics.rawValue)
            if let position { try loop.add(position.descriptor, token: Token.position.rawValue) }
            if let terminal { try loop.add(terminal.descriptor, token: Token.terminal.rawValue) }
        } catch {
            log(.error, "\(error)")
            return 1
        }
        worker.start()
        log(
            "playing \(library.root) on \(screenDescription) (profile \(profile.id), compose \(profile.compose), "
                + "budget \(MemoryBudget.format(budget.limit)))" + (control.map { ", control socket \($0.path)" } ?? "")
        )
        if let snapshots = display.snapshots { log("presented frames go to \(snapshots.directory)/") }
        presenceAndButtons = PresenceAndButtons.start(
            settings: configuration.settings, in: loop, now: MonotonicClock.seconds(), log: log)
        display.decorate = { [unowned self] pixels, _, stride in
            self.overlay.decorate(
                canvas: self.profileNow.compose, rotation: self.profileNow.rotation, pixels: pixels, stride: stride)
        }
        startOverlay(configuration.settings)
        startMQTT(configuration.settings)
        startCEC(configuration.settings)
        startWeb(configuration.settings)
        follower.owner = self
        send(.start(categories: follower.start(now: MonotonicClock.seconds()), now: MonotonicClock.seconds()))
        followSchedule()
        drainDisplay()
        // The pings come from this loop, so a player stuck anywhere in it is restarted by the service manager.
        if notifier?.watchdogInterval != nil { watchdogTimer.arm(at: MonotonicClock.seconds()) }
        if metricsWriter != nil { metricsTimer.arm(at: MonotonicClock.seconds()) }
        while exitStatus == nil {
            let ready = loop.wait()
            let woke = MonotonicClock.seconds()
            defer { longestTurn = max(longestTurn, MonotonicClock.seconds() - woke) }
            // Before anything that woke us: a deadline that passed while the system slept must not advance the show.
            noticeSleep()
            for event in ready {
                handle(event)
                drainDisplay()
                if exitStatus != nil { break }
            }
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
        position?.save()
        writeMetrics()
        // The screen first (the console back at once), then the worker, which may be in the middle of a photo.
        display.close()
        terminal?.close()
        presenceAndButtons?.close()
        mqtt?.close()
        cec?.close()
        web?.close()
        worker.stop()
        follower.stop()
        control?.close()
        loop.close()
    }

    private func handle(_ ready: EventLoop.Ready) {
        let now = MonotonicClock.seconds()
        switch Token(rawValue: ready.token) {
        case .timer:
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
        case .signals:
            for signal in signals.take() where exitStatus == nil { handleSignal(signal, now: now) }
        case .decodes:
            decodeWakeup.drain()
            for outcome in worker.takeOutcomes() { deliver(outcome, now: now) }
        case .library, .rescan, .libraryCheck, .indexes, .renditions:
            guard let source = Token(rawValue: ready.token)?.librarySource else { return }
            follower.handle(source, now: now)
        case .vblank:
            display.handleReadable(now: now)
        case .schedule:
            if scheduleTimer.acknowledge() {
                // The wall clock jumped: the system resumed (or the clock was set, which costs only a fresh
                // interval). The suspend counter may not have moved yet, so do not wait for it.
                wokeFromSleep("the wall clock jumped (resume from sleep, or the clock was set)")
            }
            followSchedule()
        case .hotplug:
            if hotplug?.takeChanges() == true { screenChanged(now: now) }
        case .input:
            for event in input?.read() ?? [] { handleInput(event, now: now) }
        case .inputHold:
            if inputHoldTimer.acknowledge() { send(.inputHoldEnded(now: now)) }
        case .banner:
            overlay.timerFired(now: now)
        case .watchdog:
            watchdogTimer.acknowledge()
            guard let notifier, let interval = notifier.watchdogInterval else { return }
            notifier.send("WATCHDOG=1")
            watchdogTimer.arm(at: now + interval)
        case .terminal:
            guard let terminal, let replaced = terminal.service() else { return }
            loop.remove(replaced)
            do {
                try loop.add(terminal.descriptor, token: Token.terminal.rawValue)
            } catch {
                log(.warning, "\(error)")
            }
        case .position:
            position?.timerFired()
        case .metrics:
            metricsTimer.acknowledge()
            writeMetrics()
            metricsTimer.arm(at: now + configuration.settings.metricsInterval)
        case .control:
            guard let control else { return }
            for client in control.accept() {
                try? loop.add(client, token: Self.clientTokenBase + UInt64(client))
            }
        case .mqttSocket, .mqttAttempt, .mqttHousekeeping, .mqttRetry, .mqttState, .mqttImage:
            guard let source = Token(rawValue: ready.token)?.mqttSource else { return }
            mqtt?.handle(source, events: ready.events, now: now)
        case .cecAdapter:
            applyCEC(cec?.handle(.adapter, now: now), now: now)
        case .cecTimer:
            applyCEC(cec?.handle(.timer, now: now), now: now)
        case .webServer: web?.handle(.server, now: now)
        case .webWorker: web?.handle(.worker, now: now)
        case .webSlide: web?.handle(.slide, now: now)
        case .webTimer: web?.handle(.timer, now: now)
        case .overlayMinute: live?.handle(.minute, now: now)
        case .overlayStale: live?.handle(.stale, now: now)
        case .overlayZone: live?.handle(.zone, now: now)
        case nil:
            if let events = presenceAndButtons?.handle(token: ready.token, now: now) {
                sendAll(events)
                return
            }
            guard let control, ready.token >= Self.clientTokenBase else { return }
            let client = Int32(ready.token - Self.clientTokenBase)
            if !control.serve(client, answer: answer) { loop.remove(client) }
        }
    }

    private func handleSignal(_ signal: Int32, now: Double) {
        switch signal {
        case SIGTERM, SIGINT:
            log(.notice, "stopping (signal \(signal))")
            exitStatus = 0
        case SIGHUP:
            reload(now: now)
        case SIGUSR1:
            send(.command(.toggle, now: now))
        case SIGCONT:
            send(.woke(now: now))
        case VirtualTerminal.releaseSignal:
            log("VT switched away: holding the show")
            send(.hold(.vtAway, now: now))
            input?.suspend()
            inputRouter.reset()
            // The switch goes ahead once the screen is given up (after the flip in flight): `.seatReleased`.
            display.releaseSeat(now: now)
        case VirtualTerminal.acquireSignal:
            terminal?.acknowledgeAcquire()
            input?.resume()
            display.returnSeat(now: now)
            log("VT back: the show goes on")
            send(.release(.vtAway, now: now))
        default:
            break
        }
    }

    private func handleInput(_ event: InputSource.Event, now: Double) {
        let outcome = inputRouter.route(
            event, keys: configuration.settings.keys, screen: profileNow.scanout, now: now)
        defer {
            // Any key or touch is someone there, after the action it carried (see `PresenceAndButtons.activity`).
            switch event {
            case .key(_, true), .touchDown, .pointerButton(true):
                var wakes = true
                if case .action(.screen) = outcome { wakes = false }
                sendAll(presenceAndButtons?.activity(now: now, wakes: wakes))
            default:
                break
            }
        }
        switch outcome {
        case .deviceAdded(let name):
            log("input device: \(name)")
        case .switchVT(let target):
            if terminal?.activate(target) == true {
                log("Ctrl+Alt+F\(target): switching to VT \(target)")
            } else if terminal?.allowsSwitching == false {
                log("Ctrl+Alt+F\(target): VT switching is off (display.vtSwitching)")
            }
        case .action(let action):
            send(.user(action, now: now))
        case nil:
            break
        }
    }

    /// A DRM connector changed: unplugged, the show holds (a pause reason of its own); back, it is matched to its
    /// profile again with `display.mode` and the profile's compose mode honoured, the mode is set again, and at
    /// another size new buffers are made and the slide is redrawn.
    private func screenChanged(now: Double) {
        guard let drm = display.executor as? DRMDisplay, let connector = drm.probeConnector() else { return }
        guard connector.connected,
            let (mode, profile) = DisplayOpener.chooseMode(
                for: connector, settings: configuration.settings, table: configuration.deviceTable, log: log)
        else {
            guard !unplugged else { return }
            unplugged = true
            log(.warning, "\(connector.name) disconnected; the show waits for it")
            display.unplugged(now: now)
            send(.hold(.unplugged, now: now))
            return
        }
        guard unplugged || mode.size != drm.size else { return }
        unplugged = false
        if mode.size == drm.size {
            log("\(connector.name) connected again at \(mode)")
            drm.use(mode)
            display.plugged(sameMode: true, now: now)
        } else {
            log("\(connector.name) connected again at \(mode): profile \(profile.id), compose \(profile.compose)")
            drm.pendingMode = mode
            profileNow = profile
            renderOptions.canvas = profile.compose
            renderOptions.rotation = profile.rotation
            renderOptions.fit = configuration.settings.fit ?? profile.fit
            worker.setOptions(renderOptions)
            follower.renditionMaker?.setProfile(profile, fit: configuration.settings.fit)
            makeCorner(configuration.settings)
            // New buffers once no flip is in flight; then `.redraw` paints the slide at the new size.
            display.plugged(sameMode: false, now: now)
        }
        send(.release(.unplugged, now: now))
    }

    /// Puts the screen in the state the schedule asks for now, and arms the timer for the next change.
    private func followSchedule() {
        let now = WallClockTimer.now()
        guard let schedule = configuration.settings.screenSchedule else {
            // Armed anyway: the kernel cancels a TFD_TIMER_CANCEL_ON_SET timer when it resumes from S3
            // (timerfd_resume), so the loop wakes the moment the system does and can tell the show it slept.
            scheduleTimer.arm(atEpochSeconds: now.epoch + 86400)
            return
        }
        send(.command(.screen(on: schedule.isOn(atMinute: now.minuteOfDay)), now: MonotonicClock.seconds()))
        let minutes = schedule.minutesUntilChange(fromMinute: now.minuteOfDay)
        scheduleTimer.arm(atEpochSeconds: now.epoch - now.secondOfMinute + minutes * 60)
    }

    /// Looks at the clocks for a sleep before anything that woke the loop is handled.
    private func noticeSleep() {
        let now = MonotonicClock.seconds()
        guard let reason = sleep.check(offset: SleepClock.offset(), suspendCount: SleepClock.suspendCount(), now: now)
        else { return }
        woke(reason, now: now)
    }

    /// Another sign of a sleep; false when it is only one more sign of a wake already handled.
    @discardableResult
    private func wokeFromSleep(_ reason: String) -> Bool {
        let now = MonotonicClock.seconds()
        guard sleep.wake(offset: SleepClock.offset(), suspendCount: SleepClock.suspendCount(), now: now) else {
            return false
        }
        woke(reason, now: now)
        return true
    }

    /// The system woke: the mode is set again (some drivers come back dark) and the slide on screen gets a full
    /// interval, with no catch-up advance.
    private func woke(_ reason: String, now: Double) {
        log(reason)
        display.woke(now: now)
        send(.woke(now: now))
    }

    /// Reads the config file again; returns why not when it cannot (the running settings stay).
    @discardableResult
    private func reload(now: Double) -> String? {
        guard let path = configuration.configPath else {
            log("SIGHUP: no config file to reload")
            return "no config file to reload (the player was started without one)"
        }
        let settings: Settings
        do {
            settings = try Settings.load(path: path)
        } catch {
            log(.error, "config reload refused, keeping the running settings: \(error)")
            return "config reload refused, keeping the running settings: \(error)"
        }
        if settings.library != configuration.settings.library {
            log("the library path changes on restart; still playing \(library.root)")
        }
        let pairingChanged = settings.pairPortraits != configuration.settings.pairPortraits
        if settings.metricsFile != configuration.settings.metricsFile {
            metricsWriter = settings.metricsFile.map { MetricsWriter(path: $0) }
            if metricsWriter == nil { metricsTimer.disarm() } else { metricsTimer.arm(at: now) }
        }
        let gpioChanged =
            settings.buttons != configuration.settings.buttons
            || settings.longPressSeconds != configuration.settings.longPressSeconds
            || settings.presence != configuration.settings.presence
        let mqttChanged = settings.mqtt != configuration.settings.mqtt
        let oldCEC = configuration.settings.cec
        let webChanged = settings.web != configuration.settings.web
        let overlayTopicsChanged =
            Set((settings.overlay?.texts ?? []).map(\.topic))
            != Set((configuration.settings.overlay?.texts ?? []).map(\.topic))
        let overlayChanged =
            settings.overlay != configuration.settings.overlay || settings.locale != configuration.settings.locale
        configuration.settings = settings
        if overlayChanged { followOverlaySettings(settings, now: now) }
        if webChanged {
            web?.close()
            web = nil
            startWeb(settings)
        }
        if gpioChanged { reopenPresenceAndButtons(settings, now: now) }
        if mqttChanged || overlayTopicsChanged {
            mqtt?.close()
            mqtt = nil
            startMQTT(settings)
        }
        if settings.cec != oldCEC {
            cec?.close()
            cec = nil
            send(.release(.tvOff, now: now))
            send(.release(.otherSource, now: now))
            startCEC(settings)
        }
        follower.rescanInterval = settings.rescanInterval
        position?.spacing = settings.positionSaveInterval
        terminal?.allowsSwitching = settings.display.vtSwitching
        followSchedule()
        renderOptions = Self.renderOptions(settings, profile: profileNow)
        worker.setOptions(renderOptions)
        crossfader.seconds = Self.fadeSeconds(
            settings, profile: profileNow, budget: budget, blendsCleanly: display.blendsCleanly,
            screen: screenDescription, log: log)
        var options = player.options
        options.interval = settings.interval
        options.order = settings.order
        options.wakeOutsideSchedule = settings.presence?.wakeOutsideSchedule ?? false
        options.transitionSeconds = crossfader.seconds ?? 0
        log.forgetWarnings()
        log("config reloaded from \(path)")
        perform(player.update(options))
        // Pairs are made when a category is indexed: index the active one again.
        if pairingChanged, let active = player.active { send(.command(.category(.named(active)), now: now)) }
        return nil
    }

    func send(_ event: Player.Event) {
        perform(player.handle(event))
    }

    private func sendAll(_ events: [Player.Event]?) {
        for event in events ?? [] { send(event) }
    }

    /// New buttons or presence settings: the lines are released and requested again (so a line given up is free
    /// at once); the room starts out present, so a screen that an empty room turned off comes back.
    private func reopenPresenceAndButtons(_ settings: Settings, now: Double) {
        if let old = presenceAndButtons {
            for descriptor in old.descriptors { loop.remove(descriptor) }
            old.close()
        }
        presenceAndButtons = PresenceAndButtons.start(settings: settings, in: loop, now: now, log: log)
        if player.screen.absent { send(.presence(present: true, why: "presence settings changed", now: now)) }
    }

    /// Connects to the broker the settings name. Settings that cannot be used (a credentials file others can
    /// read, a TLS file missing) are logged and the show goes on without MQTT.
    private func startMQTT(_ settings: Settings) {
        guard let mqttSettings = settings.mqtt else { return }
        let link: MQTTLink
        do {
            link = try MQTTLink(
                settings: mqttSettings, profile: profileNow.id, overlayTopics: live?.topics ?? [], log: log)
        } catch {
            log(.error, "\(error); the show goes on without MQTT")
            return
        }
        link.answer = { [unowned self] line in self.answer(line) }
        link.overlayMessage = { [unowned self] topic, payload in
            self.live?.received(topic: topic, payload: payload, now: MonotonicClock.seconds())
        }
        do {
            try link.start(in: loop, token: { Token($0).rawValue }, now: MonotonicClock.seconds())
        } catch {
            log(.error, "MQTT: \(error); the show goes on without MQTT")
            link.close()
            return
        }
        mqtt = link
        tellMQTT()
    }

    /// The clock, date and MQTT texts in a corner, when the settings ask for any of them.
    private func startOverlay(_ settings: Settings) {
        guard let overlaySettings = settings.overlay else { return }
        let live: LiveOverlay
        do {
            live = try LiveOverlay(
                settings: overlaySettings, locale: settings.locale ?? DateStyle.processDefault(), log: log)
            for (descriptor, source) in live.descriptors { try loop.add(descriptor, token: Token(source).rawValue) }
        } catch {
            log(.error, "overlay: \(error); the show goes on without the clock and texts")
            return
        }
        self.live = live
        makeCorner(settings)
        clockSeesScreen = nil
        live.start(now: MonotonicClock.seconds())
        log("overlay: \(live.summary) in the \(overlaySettings.corner.rawValue) corner")
    }

    /// New overlay settings: the corner is drawn anew; the texts keep their values unless they changed (then the
    /// MQTT link subscribes again and the broker's retained messages bring them back).
    private func followOverlaySettings(_ settings: Settings, now: Double) {
        guard let live, let overlaySettings = settings.overlay else {
            if let live { for (descriptor, _) in live.descriptors { loop.remove(descriptor) } }
            live = nil
            overlay.corner = nil
            startOverlay(settings)
            return
        }
        live.update(overlaySettings, locale: settings.locale ?? DateStyle.processDefault(), now: now)
        makeCorner(settings)
        log("overlay: \(live.summary) in the \(overlaySettings.corner.rawValue) corner")
    }

    /// The corner's renderer for the canvas as it is now (again after a replug to another size).
    private func makeCorner(_ settings: Settings) {
        guard let overlaySettings = settings.overlay else { return }
        do {
            overlay.corner = try CornerOverlay(
                settings: overlaySettings, canvas: profileNow.compose,
                fontPath: settings.fontPath ?? TextRenderer.defaultFont)
        } catch {
            log(.warning, "overlay: no clock or texts on screen (\(error))")
            overlay.corner = nil
        }
    }

    /// Tells the clock whether the screen is lit (off, away or unplugged, it sleeps) and gives the corner its lines.
    private func followOverlay() {
        guard let live else { return }
        let lit = display.isLit
        if lit != clockSeesScreen {
            clockSeesScreen = lit
            live.screen(on: lit)
        }
        overlay.cornerLines = live.lines(now: MonotonicClock.seconds())
    }

    /// Listens for the web remote. A port in use or a missing certificate is one log line; the show goes on.
    private func startWeb(_ settings: Settings) {
        guard let webSettings = settings.web else { return }
        let remote: WebRemote
        do {
            remote = try WebRemote(
                settings: webSettings, library: library, budget: budget,
                renditionCache: StateDirectory.renditionCacheFolder(settings: settings),
                stateFolder: StateDirectory.path, log: log)
        } catch {
            log(.error, "\(error); the show goes on without the web remote")
            return
        }
        remote.owner = WebRemote.Owner(
            status: { [unowned self] in self.statusLine(now: MonotonicClock.seconds()) },
            answer: { [unowned self] line in self.answer(line) },
            metrics: { [unowned self] in MetricsWriter.render(self.currentFigures()) },
            activeCategory: { [unowned self] in self.player.active })
        remote.renditions = follower.renditionMaker
        remote.libraryChanged = { [unowned self] in
            var changes = LibraryWatcher.Changes()
            changes.categoriesChanged = true
            changes.activeChanged = true
            self.follower.libraryChanged(changes, now: MonotonicClock.seconds())
        }
        do {
            try remote.start(in: loop, token: { Token($0).rawValue })
        } catch {
            log(.error, "web remote: \(error); the show goes on without it")
            remote.close()
            return
        }
        web = remote
    }

    /// Opens the CEC adapter the settings ask for (a missing one is one log line; the show goes on).
    private func startCEC(_ settings: Settings) {
        guard let cecSettings = settings.cec else { return }
        let screen = (display.executor as? DRMDisplay).map { (cardPath: $0.cardPath, connectorID: $0.connector.id) }
        guard
            let link = CECLink.start(settings: cecSettings, screen: screen, screenOn: player.screen.isOn, log: log)
        else { return }
        do {
            try link.register(in: loop, token: { Token($0).rawValue })
        } catch {
            log(.warning, "CEC: \(error); the TV will not follow the screen")
            link.close()
            return
        }
        cec = link
    }

    /// What the bus means for the show: the TV off or showing another device holds it, its remote's keys act
    /// as the keyboard's (through the same key map), and count as someone in the room.
    private func applyCEC(_ outcomes: [CECLink.Outcome]?, now: Double) {
        for outcome in outcomes ?? [] {
            switch outcome {
            case .hold(let reason):
                send(.hold(reason, now: now))
            case .release(let reason):
                send(.release(reason, now: now))
            case .key(let name):
                guard let action = configuration.settings.keys.action(forKey: name) else {
                    log("CEC: remote key \(name) is not bound to anything (keys in vitrine.json)")
                    continue
                }
                send(.user(action, now: now))
                sendAll(presenceAndButtons?.activity(now: now, wakes: action != .screen))
            }
        }
    }

    /// The show's state and categories as they are after this turn, for the broker (sent only when changed).
    /// Runs after every turn of the loop (each step of a fade too), so it reads only what is at hand; the slide's
    /// place in the playlist, which takes a walk through the round, is looked up only when the slide or the
    /// playlist's size changed.
    private func tellMQTT() {
        guard let mqtt else { return }
        mqtt.categoriesAre(player.categories)
        let slide = player.onScreen
        let count = player.playlist?.count ?? 0
        if mqttPosition?.slide != slide || mqttPosition?.count != count {
            mqttPosition = (slide, count, slide.flatMap { player.playlist?.number(of: $0) })
        }
        mqtt.stateIs(
            MQTTState(
                category: player.active, slide: slide?.name, position: mqttPosition?.position, count: count,
                paused: player.timer.reasons.sorted(), screenOn: display.isPoweredOn && player.screen.isOn,
                present: presenceAndButtons?.isPresent, interval: player.options.interval, profile: profileNow.id),
            now: MonotonicClock.seconds())
    }

    var followedShow: LibraryFollower.Show {
        LibraryFollower.Show(
            active: player.active, playlist: player.playlist, order: player.options.order, pairPortraits: pairsPortraits
        )
    }

    private func perform(_ actions: [Player.Action]) {
        for action in actions { perform(action) }
    }

    private func perform(_ action: Player.Action) {
        switch action {
        case .index(let name):
            follower.index(name)
        case .decode(let request):
            if !crossfader.deferIfFading(request) { worker.submit(request) }
        case .cancel(let id):
            crossfader.cancel(id)
            worker.cancel(id)
        case .present(let frame, let id):
            let decode = decodes.removeValue(forKey: id)
            present(
                frame,
                PresentRecord(
                    category: id.category, slide: id.name, file: decode?.file, decodeMilliseconds: decode?.milliseconds)
            )
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
        }
    }

    /// A new slide: a crossfade from the one on screen when fades are on and the screen can show one, else a cut.
    private func present(_ frame: Frame, _ record: PresentRecord) {
        mqtt?.slideOnTheWay(frame)
        web?.slideOnTheWay(frame, now: MonotonicClock.seconds())
        // Only the first step now: painting a second one meanwhile would hold up seeing the first land (the
        // viewer's latency); the third buffer is used from the first completed step on.
        display.show(crossfader.present(frame, record, screenCanFade: display.canFade, now: MonotonicClock.seconds()))
    }

    /// Hands the display the fade's next steps while it can take them: one when nothing is flipping, and with a
    /// third buffer one more, painted while the flip is in flight (so it makes the next vblank). A dark screen
    /// takes whatever comes (the steps hurry to the last).
    private func feedFade(now: Double) {
        // The fade hurries to its end when the viewer already asked for another slide or the screen went away.
        if player.hasPictureWaiting || !display.canFade { crossfader.hurry() }
        while crossfader.wantsStep, !display.isBusy || display.canPrepare || !display.isLit,
            let step = crossfader.nextStep(now: now, vblanksAhead: display.canPrepare ? 2 : 1)
        {
            display.show(step)
        }
    }

    private func deliver(_ outcome: DecodeWorker.Outcome, now: Double) {
        switch outcome.result {
        case .success(let frame):
            for warning in outcome.warnings { log(.warning, warning) }
            decodes[outcome.request.slide.id] = (outcome.file, outcome.seconds * 1000)
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
        guard display.isLit, !display.isBusy, !crossfader.isFading else { return }
        overlay.refresh(
            paused: player.timer.reasons.contains(.user), canvas: profileNow.compose, rotation: profileNow.rotation,
            show: { display.show($0) })
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
                case .completed(let content, let visible, let at):
                    completed(content.shown, visible: visible, now: min(at, now))
                case .reappeared:
                    // A picture painted for the return has the corner painted in (`decorate`); the rest follows.
                    break
                case .redraw:
                    send(.redraw(now: now))
                case .seatReleased:
                    terminal?.allowRelease()
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
            crossfader.stepDone(visible: visible, sequence: display.lastSequence, now: now)
            feedFade(now: now)
            return
        }
        guard case .frame(let record) = shown else { return }
        for request in crossfader.frameDone(visible: visible, sequence: display.lastSequence) { worker.submit(request) }
        presentedCount += 1
        position?.shown(SlideID(category: record.category, name: record.slide), now: now)
        figures.slidesShown += 1
        figures.lastSlideTime = WallClock.seconds()
        if configuration.stats { logStats(record, now: now) }
        advanceDeadline = nil
        send(.flipDone(now: now))
        if let limit = configuration.exitAfter, presentedCount >= limit {
            log("presented \(presentedCount) slides; exiting as asked")
            exitStatus = 0
        }
    }

    /// Rewrites the metrics file (when one is configured) with the figures as they are now.
    private func writeMetrics() {
        guard let metricsWriter else { return }
        do {
            try metricsWriter.write(currentFigures())
        } catch {
            log(.warning, "\(error)")
        }
    }

    /// The figures as they are now.
    private func currentFigures() -> MetricsWriter.Figures {
        figures.residentBytes = ProcessMemory.residentBytes()
        figures.budgetUsedBytes = budget.used
        figures.pauseReasons = player.timer.reasons
        figures.screenOn = display.isPoweredOn && player.screen.isOn
        figures.present = presenceAndButtons?.isPresent
        figures.screenConnected = !unplugged
        figures.mqttConnected = mqtt?.isConnected
        figures.mqttReconnects = mqtt?.reconnects ?? 0
        figures.cecTV = cec?.state.tvPower.rawValue
        figures.cecActiveSource = cec?.state.isActiveSource ?? false
        return figures
    }

    private func logStats(_ record: PresentRecord, now: Double) {
        let mib = { (bytes: Int) in JSONText.number(Double(bytes) / 1_048_576) }
        // With a crossfade the change becomes visible at its first step.
        let visible = crossfader.firstShown ?? now
        let latency = advanceDeadline.map { "\(JSONText.number((visible - $0) * 1000)) ms" } ?? "-"
        let decode = record.decodeMilliseconds.map { "\(JSONText.number($0)) ms" } ?? "-"
        // Drivers without a real vblank count none (sequence 0 throughout): nothing to say then.
        let pacing = crossfader.lastPacing.flatMap {
            $0.vblanks > 0 ? " fade \($0.steps) steps over \($0.vblanks) vblanks" : nil
        }
        log(
            "stats: slide \(SlideID(category: record.category, name: record.slide)) decode \(decode) "
                + "deadline-to-present \(latency)\(pacing ?? "") rss \(mib(ProcessMemory.residentBytes())) MiB peak "
                + "\(mib(ProcessMemory.peakResidentBytes())) MiB budget "
                + "\(mib(budget.used))/\(mib(budget.limit)) MiB MemAvailable \(mib(ProcessMemory.availableBytes())) MiB"
        )
    }

    /// One answer line for one control line.
    private func answer(_ line: String) -> String {
        guard let command = ControlCommand.parse(line) else { return "error: \(ControlCommand.refusal(line))" }
        let now = MonotonicClock.seconds()
        if command == .status { return statusLine(now: now) }
        if command == .reload { return reload(now: now).map { "error: \($0)" } ?? "ok" }
        if command == .rotateToken {
            guard let web else { return "error: the web remote is off (no web settings)" }
            do {
                _ = try web.rotateToken()
                return "ok"
            } catch {
                return "error: \(error)"
            }
        }
        // A slide asked for by name counts, in `--stats`, from the request.
        switch command {
        case .next, .previous, .first, .category: advanceDeadline = now
        default: break
        }
        send(.command(command, now: now))
        var wakes = true
        if case .screen = command { wakes = false }
        sendAll(presenceAndButtons?.activity(now: now, wakes: wakes))
        return "ok"
    }

    /// The TV as CEC knows it, for `status`: null without CEC.
    private var cecStatus: String {
        guard let cec else { return "null" }
        let state = cec.state
        return "{\"adapter\":\(JSONText.quote(cec.device)),"
            + "\"address\":\(state.logicalAddress == nil ? "null" : JSONText.quote(CECAddress.physical(state.physicalAddress))),"
            + "\"tv\":\"\(state.tvPower.rawValue)\",\"active_source\":\(state.isActiveSource)}"
    }

    private func statusLine(now: Double) -> String {
        let status = player.status(now: now)
        let mib = { (bytes: Int) in JSONText.number(Double(bytes) / 1_048_576) }
        let fields = [
            "\"category\":\(status.category.map(JSONText.quote) ?? "null")",
            "\"slide\":\(status.slide.map { JSONText.quote($0.name) } ?? "null")",
            "\"position\":\(status.position.map(String.init) ?? "null")",
            "\"count\":\(status.count)",
            "\"paused\":[\(status.paused.map { JSONText.quote($0.rawValue) }.joined(separator: ","))]",
            "\"seconds_left\":\(JSONText.number(status.secondsLeft))",
            "\"frames_cached\":\(status.framesCached)",
            "\"presented\":\(presentedCount)",
            "\"screen\":\(display.isPoweredOn ? "\"on\"" : "\"off\"")",
            "\"presence\":\(presenceAndButtons?.isPresent.map { $0 ? "\"present\"" : "\"absent\"" } ?? "null")",
            "\"motion\":\(presenceAndButtons?.motion.map { $0 ? "true" : "false" } ?? "null")",
            "\"cec\":\(cecStatus)",
            "\"budget_used_mib\":\(mib(budget.used))",
            "\"budget_total_mib\":\(mib(budget.limit))",
            "\"rss_mib\":\(mib(ProcessMemory.residentBytes()))",
            "\"flips\":\(display.flips)",
            "\"modesets\":\(display.modesets)",
            "\"longest_turn_ms\":\(JSONText.number((longestTurn * 1000).rounded()))",
        ]
        longestTurn = 0
        return "{" + fields.joined(separator: ",") + "}"
    }
}
