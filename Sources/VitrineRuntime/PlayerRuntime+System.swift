import CLinux
import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrineInput
import VitrineLinks
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the system does to the show: signals, keys and touch, screens plugged in or out, the screen schedule,
/// sleep, and a config reloaded.
extension PlayerRuntime {
    func handleSignal(_ signal: Int32, now: Double) {
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
            for show in shows { show.inputRouter.reset() }
            // The switch goes ahead once the screen is given up (after the flip in flight): `.seatReleased`.
            for display in displays { display.releaseSeat(now: now) }
        case VirtualTerminal.acquireSignal:
            terminal?.acknowledgeAcquire()
            input?.resume()
            for display in displays { display.returnSeat(now: now) }
            log("VT back: the show goes on")
            send(.release(.vtAway, now: now))
        default:
            break
        }
    }

    /// The shows a device's event steers: a touchscreen or pointer mapped to a screen (`output`, udev's
    /// `WL_OUTPUT`) steers that screen's show; the keyboard and unmapped devices steer the output that takes the
    /// keyboard, else every show.
    func shows(steeredBy event: InputSource.Event, from output: String?) -> [Show] {
        let keyboard = shows.filter { $0.output?.keyboard == true }
        let fallback = keyboard.isEmpty ? shows : keyboard
        switch event {
        case .key, .deviceAdded:
            return fallback
        default:
            let mirrored = show.mirrors?.screens.contains { $0.connectorName == output || $0.name == output }
            guard let output,
                let mapped = shows.first(where: { $0.connectorName == output || $0.name == output })
                    ?? (mirrored == true ? show : nil)
            else { return fallback }
            return [mapped]
        }
    }

    func handleInput(_ event: InputSource.Event, from output: String?, now: Double) {
        let targets = shows(steeredBy: event, from: output)
        guard let first = targets.first else { return }
        // One reading of the gesture or the key, on the first screen's terms; its action goes to every target.
        let outcome = first.inputRouter.route(
            event, keys: configuration.settings.keys, screen: first.profileNow.scanout, now: now)
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
            for show in targets { show.send(.user(action, now: now)) }
        case nil:
            break
        }
    }

    /// Puts each screen in the state its schedule asks for now, tells each show the date (for "on this day"), and
    /// arms the timer for the next change of any: the wall-clock timer also fires when the clock is set, so a step
    /// of the clock (NTP at boot, a new zone) is followed at once.
    func followSchedule() {
        let now = WallClockTimer.now()
        let local = LocalTime.now()
        // Armed anyway: the kernel cancels a TFD_TIMER_CANCEL_ON_SET timer when it resumes from S3
        // (timerfd_resume), so the loop wakes the moment the system does and can tell the show it slept.
        var deadline = now.epoch + 86400
        for show in shows { deadline = min(deadline, show.followSchedule(now: now, local: local)) }
        scheduleTimer.arm(atEpochSeconds: deadline)
    }

    /// Looks at the clocks for a sleep before anything that woke the loop is handled.
    func noticeSleep() {
        let now = MonotonicClock.seconds()
        guard let reason = sleep.check(offset: SleepClock.offset(), suspendCount: SleepClock.suspendCount(), now: now)
        else { return }
        woke(reason, now: now)
    }

    /// Another sign of a sleep; false when it is only one more sign of a wake already handled.
    @discardableResult
    func wokeFromSleep(_ reason: String) -> Bool {
        let now = MonotonicClock.seconds()
        guard sleep.wake(offset: SleepClock.offset(), suspendCount: SleepClock.suspendCount(), now: now) else {
            return false
        }
        woke(reason, now: now)
        return true
    }

    /// The system woke: the mode is set again (some drivers come back dark) and the slide on screen gets a full
    /// interval, with no catch-up advance.
    func woke(_ reason: String, now: Double) {
        log(reason)
        for display in displays { display.woke(now: now) }
        send(.woke(now: now))
    }

    /// Reads the config file again; returns why not when it cannot (the running settings stay).
    @discardableResult
    func reload(now: Double) -> String? {
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
        let previous = configuration.settings
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
        let sourcesChanged = settings.sources != configuration.settings.sources
        let overlayTopicsChanged =
            Set((settings.overlay?.texts ?? []).map(\.topic))
            != Set((configuration.settings.overlay?.texts ?? []).map(\.topic))
        configuration.settings = settings
        places = Self.openPlaces(settings, keeping: places, log: log)
        for show in shows { show.reload(settings, now: now) }
        if let web, let new = settings.web, web.canTake(new) {
            if webChanged { log("web remote: reloaded settings taken") }
            web.take(new, maxMegapixels: settings.maxMegapixels)
        } else if webChanged {
            // Not from here: a reload asked through the remote runs inside the server's own request callback,
            // and libmicrohttpd must not be stopped from there. The loop does it once this turn is over.
            webRestartDue = true
        }
        if gpioChanged { reopenPresenceAndButtons(settings, now: now) }
        if sourcesChanged {
            // A sync that runs is stopped (it resumes from its part files) and the new sources start afresh.
            stoppedSyncs += syncs?.close() ?? []
            syncs = nil
            startSyncs(settings)
        }
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
        terminal?.allowsSwitching = settings.display.vtSwitching
        followSchedule()
        let options = shows.map { $0.reloadedOptions() }
        log.forgetWarnings()
        log("config reloaded from \(path)")
        for (show, options) in zip(shows, options) { show.take(options, previous: previous, now: now) }
        return nil
    }
}

/// What the system does to one show: its screen plugged in or out, its schedule, a config reloaded.
extension Show {
    /// A DRM connector changed: unplugged, the show holds (a pause reason of its own); back, it is matched to its
    /// profile again with `display.mode` and the profile's compose mode honoured, the mode is set again, and at
    /// another size new buffers are made and the slide is redrawn.
    func screenChanged(now: Double) {
        guard let drm = display.executor as? DRMDisplay, let connector = drm.probeConnector() else { return }
        guard connector.connected,
            let (mode, profile) = DisplayOpener.chooseMode(
                for: connector, settings: settings, table: house.configuration.deviceTable, log: log)
        else {
            guard !unplugged else { return }
            unplugged = true
            let others = mirrors.map { !$0.allUnplugged } ?? false
            log(
                .warning,
                "\(connector.name) disconnected; "
                    + (others ? "the show goes on on the other screens" : "the show waits for it"))
            display.unplugged(now: now)
            followPlugs(now: now)
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
            display.corner = (overlay, profile.compose, profile.rotation)
            renderOptions.canvas = profile.compose
            renderOptions.rotation = profile.rotation
            renderOptions.fit = settings.fit ?? profile.fit
            worker.setOptions(renderOptions)
            follower.renditionMaker?.setProfile(profile, fit: settings.fit)
            makeCorner()
            // New buffers once no flip is in flight; then `.redraw` paints the slide at the new size.
            display.plugged(sameMode: false, now: now)
            mirrors?.regroupLogged()
        }
        followPlugs(now: now)
    }

    /// The show holds while no screen it plays on is plugged in: its own, and with a mirror every other one too.
    func followPlugs(now: Double) {
        let dark = unplugged && (mirrors?.allUnplugged ?? true)
        send(dark ? .hold(.unplugged, now: now) : .release(.unplugged, now: now))
    }

    /// Puts the screen in the state the schedule asks for now and tells the show the date; returns the epoch second
    /// of the next change of either (local midnight at the latest).
    func followSchedule(now: (epoch: Int, minuteOfDay: Int, secondOfMinute: Int), local: LocalTime) -> Int {
        let today = ShowDay(local)
        if player.today?.dayNumber != today.dayNumber {
            send(.today(today, now: MonotonicClock.seconds()))
        }
        // Local midnight; on a day of a daylight-saving change the timer may fire an hour off, and is armed again.
        var deadline = local.epoch - (local.hour * 3600 + local.minute * 60 + local.second) + 86400
        let minute = LocalMinute(local)
        let dayParts = settings.dayParts
        let part = dayParts.flatMap { parts in parts.inForce(at: minute).map { parts.parts[$0] } }
        if player.dayParts.part != part { send(.dayPart(part, now: MonotonicClock.seconds())) }
        dayPartUntil = dayParts?.nextChange(after: minute)
        if let boundary = dayPartUntil { deadline = min(deadline, boundary.epoch) }
        guard let schedule = settings.screenSchedule else { return deadline }
        send(.command(.screen(on: schedule.isOn(atMinute: now.minuteOfDay)), now: MonotonicClock.seconds()))
        let minutes = schedule.minutesUntilChange(fromMinute: now.minuteOfDay)
        return min(deadline, now.epoch - now.secondOfMinute + minutes * 60)
    }

    /// New settings from a reload, before the runtime's own are applied: this show's as its output says.
    func reload(_ new: Settings, now: Double) {
        var own = new
        if let output, !new.mirror {
            guard let updated = new.outputs.first(where: { $0.name == output.name }) else {
                log(.warning, "output \(name) is no longer in the config: its show goes on as it was until a restart")
                return
            }
            if updated.connector != output.connector || updated.mode != output.mode
                || updated.rotation != output.rotation
            {
                log("output \(name): its screen, mode and rotation change on restart")
            }
            own = new.forOutput(updated)
        }
        if output != nil {
            // One of several screens stays as it was opened.
            own.display.connector = settings.display.connector
            own.display.mode = settings.display.mode
            own.rotation = settings.rotation
        }
        if own.library != settings.library {
            log("the library path changes on restart; still playing \(library.root)")
        }
        let overlayChanged = own.overlay != settings.overlay || own.locale != settings.locale
        settings = own
        if overlayChanged { followOverlaySettings(now: now) }
    }

    /// The runtime has taken the reload too: the show's parts follow its new settings, and the player's options
    /// as they now are come back for `take`.
    func reloadedOptions() -> Player.Options {
        follower.rescanInterval = settings.rescanInterval
        position?.spacing = settings.positionSaveInterval
        renderOptions = Self.renderOptions(settings, profile: profileNow, places: house.places)
        worker.setOptions(renderOptions)
        display.fadeSeconds = Self.fadeSeconds(
            settings, profile: profileNow, budget: budget, blendsCleanly: display.blendsCleanly,
            screen: screenDescription, log: log)
        var options = player.options
        options.interval = settings.interval
        options.order = settings.order
        options.mix = settings.mix
        options.dayPartHold = settings.dayParts?.hold
        options.pairPortraits = pairsPortraits
        options.wakeOutsideSchedule = settings.presence?.wakeOutsideSchedule ?? false
        options.transitionSeconds = display.fadeSeconds ?? 0
        mirrors?.reload(settings)
        return options
    }

    /// The player takes its new options (after the log says the config is reloaded).
    func take(_ options: Player.Options, previous: Settings, now: Double) {
        let pairingChanged =
            settings.pairPortraits != previous.pairPortraits || settings.minRating != previous.minRating
        perform(player.update(options))
        player.changeFavouriteRating(to: settings.favouriteRating)
        // Pairs (in name and newest order) and the rating filter are made when a category is indexed: index the
        // active one again.
        if pairingChanged, let active = player.active { send(.command(.category(.named(active)), now: now)) }
    }
}
