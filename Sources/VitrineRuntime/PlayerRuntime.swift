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
    var configuration: PlayConfiguration
    package let log: EventLog
    /// The service manager (systemd), when one started the player and listens.
    private let notifier: ServiceNotifier?
    private var toldReady = false
    private let watchdogTimer: MonotonicTimer
    let metricsTimer: MonotonicTimer
    var metricsWriter: MetricsWriter?
    var figures = MetricsWriter.Figures()
    let favouritesStore: FavouritesStore?
    public let budget: MemoryBudget
    /// The place index `{place}` captions are looked up in, opened only when the caption has `{place}`.
    var places: PlaceIndex?
    let loop: EventLoop
    let signals: SignalSource
    /// The shows, one per screen.
    private(set) var shows: [Show] = []
    /// The show the links address while there is one screen.
    var show: Show { shows[0] }
    let hotplug: HotplugMonitor?
    var terminal: VirtualTerminal?
    /// The VT's registration in the loop (a hangup replaces its descriptor).
    private var terminalSource: EventLoop.Source?
    var input: InputSource?
    /// GPIO buttons, the motion sensor and the room's presence; nil when the settings have none of them.
    var presenceAndButtons: PresenceAndButtons?
    /// The MQTT broker (Home Assistant, a fleet); nil without `mqtt` settings or when they cannot be used.
    var mqtt: MQTTLink?
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
    /// The picture of the slide on screen, made once for both MQTT's image topic and the web remote's page.
    lazy var slidePictures = SlidePictures(loop: loop, log: log) { [unowned self] result, now in
        mqtt?.slidePicture(result, now: now)
        web?.slidePictureMade()
    }
    let control: ControlServer?
    /// The web remote is to be made anew with the settings (a reload moved it), once the loop's turn is over.
    var webRestartDue = false
    let scheduleTimer: WallClockTimer
    var sleep = SleepDetector(offset: SleepClock.offset(), suspendCount: SleepClock.suspendCount())
    var exitStatus: Int32?
    /// The shows whose screens have let go for a VT switch asked for.
    private var released: Set<ObjectIdentifier> = []
    /// The longest time the loop spent on one wake-up since the last `status` (a flip or a key waits that long).
    var longestTurn = 0.0

    /// Sets everything up; a problem the user must fix (budget too small, socket in use, library missing) is
    /// thrown as one line.
    public init(configuration: PlayConfiguration, log: EventLog) throws(PlayError) {
        self.configuration = configuration
        self.log = log
        let settings = configuration.settings
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
        let outputs: [DisplayOpener.OpenedOutput]
        if settings.outputs.isEmpty, !settings.mirror {
            let opened = try DisplayOpener.open(configuration, log: log, notifier: notifier, signals: signals)
            outputs = [
                DisplayOpener.OpenedOutput(
                    name: opened.connector?.name ?? "screen", settings: settings, display: opened)
            ]
        } else if case .headless(let size) = configuration.display {
            outputs = DisplayOpener.headlessOutputs(settings, size: size, table: configuration.deviceTable)
        } else {
            outputs = try DisplayOpener.openOutputsWaiting(
                configuration, log: log, notifier: notifier, signals: signals)
        }
        let several = outputs.count > 1 || !settings.outputs.isEmpty
        let profiles = outputs.map(\.display.profile)
        // One board, one memory: the largest profile's budget, against what every screen needs at the least.
        let budgetMiB = settings.memoryBudgetMiB ?? profiles.map(\.memoryBudgetMiB).max() ?? 0
        budget = MemoryBudget(limit: budgetMiB << 20)
        let needed = profiles.reduce(0) { $0 + $1.minimumBudgetBytes }
        guard budget.limit >= needed else {
            outputs.first?.display.device?.close()
            let source = settings.memoryBudgetMiB != nil ? "memoryBudgetMiB" : "the profiles' budget"
            let screens = profiles.map { "two \($0.scanout) scanout buffers and one \($0.compose) frame" }
            throw PlayError(
                "memory budget \(budgetMiB) MiB (\(source)) is below the \(MemoryBudget.format(needed)) that "
                    + screens.joined(separator: " and ") + " need")
        }
        let first = outputs[0].display
        // Where each screen has a show, each has its share of the budget, by its size.
        let board = budget
        var budgets = outputs.map { _ in board }
        if !settings.mirror, outputs.count > 1,
            let shares = board.shares(
                minimum: profiles.map(\.minimumBudgetBytes), pixels: profiles.map { $0.compose.pixelCount })
        {
            budgets = shares
            log(
                "memory budget \(MemoryBudget.format(board.limit)) shared by the screens: "
                    + zip(outputs, shares).map { "\($0.name) \(MemoryBudget.format($1.limit))" }.joined(
                        separator: ", "))
        }
        places = Self.openPlaces(settings, keeping: nil, log: log)
        do {
            favouritesStore = try FavouritesStore.path(settings: settings).map { (path) throws(RuntimeError) in
                try FavouritesStore(path: path, log: log)
            }
        } catch {
            throw PlayError("\(error)")
        }
        // Once, before anything is read from or written to it: a read-only root's state folder is replaced.
        if let line = StateDirectory.settle() { log(.notice, line) }
        let crashGuard = CrashGuard(folder: StateDirectory.path, markers: StateDirectory.runtimePath)
        for note in crashGuard.notes { log(.warning, note) }
        do {
            // Both only change process settings and cannot fail for these arguments (sigaction of SIGPIPE, mallopt).
            _ = vitrine_ignore_sigpipe()
            _ = vitrine_return_large_blocks()
            loop = try EventLoop()
            // Like the other links, a control socket that cannot be made is one log line: the show matters more.
            do {
                control = try ControlServer(path: configuration.controlPath ?? ControlServer.defaultPath())
            } catch {
                control = nil
                log(.warning, "no control socket (vitrine ctl will not reach this player): \(error)")
            }
            scheduleTimer = try WallClockTimer()
            watchdogTimer = try MonotonicTimer()
            metricsTimer = try MonotonicTimer()
        } catch {
            throw PlayError("\(error)")
        }
        hotplug = first.device == nil ? nil : Self.openHotplug(log: log)
        metricsWriter = settings.metricsFile.map { MetricsWriter(path: $0) }
        figures.budgetLimitBytes = budget.limit
        figures.startTime = WallClock.seconds()
        var roots: Set<String> = []
        var mirrored: [MirrorScreen] = []
        for (output, share) in zip(outputs, budgets) {
            let snapshots: SnapshotWriter?
            do {
                // Each screen's frames in a folder of its own where there are several.
                snapshots = try configuration.snapshots.map { (directory) throws(RuntimeError) in
                    try SnapshotWriter(
                        directory: several ? "\(directory)/\(output.name)" : directory,
                        started: MonotonicClock.seconds())
                }
            } catch {
                throw PlayError("\(error)")
            }
            // A mirror is one show, on the first screen; the others follow it.
            if settings.mirror, !shows.isEmpty {
                mirrored.append(try MirrorScreen(output: output, budget: budget, snapshots: snapshots, log: log))
                continue
            }
            var own = output.settings
            // Two shows of one library each index it; only the first keeps its header and rendition caches, which
            // are written in place (one writer per file).
            if !roots.insert(Library(root: own.library).root).inserted {
                own.headerCacheFolder = ""
                own.renditionCacheFolder = ""
            }
            let path =
                several && !settings.mirror
                ? PositionStore.path(settings: own, output: output.name) : PositionStore.path(settings: own)
            let store = path.map { PositionStore(path: $0) }
            let root = Library(root: own.library).root
            var resume: (slide: SlideID?, selection: SelectionState?) = (nil, nil)
            if let saved = store?.load(), saved.library == root, !configuration.ignoresSavedPosition {
                resume = (saved.slide, saved.selection)
            }
            let position: PositionKeeper?
            do {
                position = try store.map { (store) throws(RuntimeError) in
                    try PositionKeeper(store: store, library: root, spacing: own.positionSaveInterval, log: log)
                }
            } catch {
                throw PlayError("\(error)")
            }
            shows.append(
                try Show(
                    house: self, name: output.name, settings: own, output: output.output, opened: output.display,
                    budget: share,
                    resume: resume,
                    position: position, crashGuard: crashGuard, snapshots: snapshots))
        }
        let show = shows[0]
        if !mirrored.isEmpty {
            show.mirrors = Mirrors(show: show, screens: mirrored, crashGuard: crashGuard)
            log(
                "mirror: \(show.name) plays the show; "
                    + mirrored.map(\.name).joined(separator: ", ") + " show each slide with it")
        }
        // VT switching matters only when Vitrine drives the screen itself and runs on a VT.
        let onScreen = show.display.executor is DRMDisplay || show.display.executor is FbdevDisplay
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
    }

    /// Hotplug matters only for a real screen; without udev the show still runs, it just cannot follow plugs.
    private static func openHotplug(log: EventLog) -> HotplugMonitor? {
        do {
            return try HotplugMonitor()
        } catch {
            log(.warning, "screens plugged in or out will not be noticed: \(error)")
            return nil
        }
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

    /// With fades, a third scanout buffer only where a step's blend takes more than half a frame (a Pi Zero at
    /// 1080p, a guest under emulation): the next step is then painted while the last one's flip is in flight, so it
    /// still makes every vblank. Where blending is quick, two buffers make every vblank too (the step is painted
    /// between a flip's completion and the next vblank), and the third would be a whole frame held for nothing.
    package static func fadeBuffers(stepSeconds: Double, refreshHz: Int) -> Int {
        stepSeconds > 0.5 / Double(max(refreshHz, 1)) ? 3 : 2
    }

    public var controlPath: String? { control?.path }

    /// Plays until a signal or `--exit-after` ends the show. Returns the exit status.
    public func run() -> Int32 {
        do {
            try registerSources()
        } catch {
            log(.error, "\(error)")
            return 1
        }
        for show in shows {
            log(
                "playing \(show.library.root) on \(show.screenDescription) (profile \(show.profile.id), compose "
                    + "\(show.profile.compose), budget \(MemoryBudget.format(budget.limit)))"
                    + (control.map { ", control socket \($0.path)" } ?? ""))
            if let snapshots = show.display.snapshots { log("presented frames go to \(snapshots.directory)/") }
        }
        presenceAndButtons = PresenceAndButtons.start(
            settings: configuration.settings, in: loop, now: MonotonicClock.seconds(), log: log
        ) { [unowned self] events in sendAll(events) }
        for show in shows {
            show.display.corner = (show.overlay, show.profileNow.compose, show.profileNow.rotation)
            show.startOverlay()
        }
        show.mirrors?.regroupLogged()
        for screen in show.mirrors?.screens ?? [] { screen.makeCorner(house: self) }
        startMQTT(configuration.settings)
        startCEC(configuration.settings)
        startWeb(configuration.settings)
        startSyncs(configuration.settings)
        // What the player costs before its first photo: the screen's buffers, the links, the code they run.
        if configuration.stats { logStartStats() }
        for show in shows {
            let now = MonotonicClock.seconds()
            show.send(.start(categories: show.follower.start(now: now), now: now))
        }
        followSchedule()
        drainDisplays()
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
                drainDisplays()
                if exitStatus != nil { break }
            }
            if webRestartDue {
                webRestartDue = false
                web?.close()
                web = nil
                startWeb(configuration.settings)
            }
            if !stoppedSyncs.isEmpty { stoppedSyncs.removeAll { $0.reap() != nil } }
            for show in shows {
                show.followOverlay()
                show.refreshOverlay()
            }
            drainDisplays()
            tellMQTT()
        }
        shutdown()
        return exitStatus ?? 0
    }

    private func drainDisplays() {
        for show in shows { show.drainDisplay() }
    }

    private func shutdown() {
        notifier?.send("STOPPING=1")
        favouritesStore?.finish()
        writeMetrics()
        // The screens first (the console back at once), then the workers, which may be in the middle of a photo.
        for show in shows { show.close() }
        terminal?.close()
        presenceAndButtons?.close()
        mqtt?.close()
        cec?.close()
        web?.close()
        // Not waited for: systemd (or init) collects a sync still ending after the player.
        _ = syncs?.close()
        slidePictures.stop()
        libraryLoader.stop()
        control?.close()
        loop.close()
    }

    /// The runtime's own descriptors, each with its handler; the shows and the parts (the links, the overlay,
    /// buttons and presence) register theirs as they start.
    private func registerSources() throws(RuntimeError) {
        try loop.add(signals.descriptor) { [unowned self] _ in
            let now = MonotonicClock.seconds()
            for signal in signals.take() where exitStatus == nil { handleSignal(signal, now: now) }
        }
        for show in shows { try show.register(in: loop) }
        // Each display descriptor once, for every display that reads it (one card's flips come on one).
        let displays = self.displays
        var descriptors: [Int32] = []
        for display in displays {
            for descriptor in display.eventDescriptors where !descriptors.contains(descriptor) {
                descriptors.append(descriptor)
            }
        }
        for descriptor in descriptors {
            let readers = displays.filter { $0.eventDescriptors.contains(descriptor) }
            try loop.add(descriptor) { _ in
                for display in readers { display.handleReadable(now: MonotonicClock.seconds()) }
            }
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
                guard hotplug.takeChanges() else { return }
                for show in shows { show.screenChanged(now: MonotonicClock.seconds()) }
                if let mirrors = show.mirrors {
                    mirrors.screensChanged(now: MonotonicClock.seconds())
                    show.followPlugs(now: MonotonicClock.seconds())
                }
            }
        }
        if let input {
            try loop.add(input.descriptor) { [unowned self] _ in
                let now = MonotonicClock.seconds()
                for (event, output) in input.readRouted() { handleInput(event, from: output, now: now) }
            }
        }
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

    /// An event for every show (a command without an output, the room, the TV).
    package func send(_ event: Player.Event) {
        for show in shows { show.send(event) }
    }

    func sendAll(_ events: [Player.Event]?) {
        for event in events ?? [] { send(event) }
    }

    /// Every screen's display: the shows' own, then a mirror's others.
    var displays: [DisplayController] {
        shows.map(\.display) + (show.mirrors?.screens.map(\.display) ?? [])
    }

    /// A screen's display gave up DRM master: the VT switch may go ahead once every screen's has.
    func seatReleased(by screen: ObjectIdentifier) {
        released.insert(screen)
        guard released.count == displays.count else { return }
        released = []
        terminal?.allowRelease()
    }

    /// A whole picture reached a screen: the service is up.
    func pictureShown(on show: Show) {
        guard !toldReady else { return }
        toldReady = true
        notifier?.send("READY=1\nSTATUS=playing \(show.library.root) on \(show.screenDescription)")
    }

    /// Whether `--exit-after N` is reached with the slide `show` just presented; the player then stops.
    func presentedEnough(by show: Show) -> Bool {
        guard let limit = configuration.exitAfter, show.presentedCount >= limit else { return false }
        log("presented \(show.presentedCount) slides; exiting as asked")
        exitStatus = 0
        return true
    }
}
