import CLinux
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Finds the screen to play on and its device profile: a DRM card (waiting, asleep, for a screen to be plugged in
/// when the cards are there but nothing is connected), else fbdev, else the headless display. DRM work here only
/// probes and takes master; buffers come later, once the budget is known.
package enum DisplayOpener {
    package struct OpenedDisplay {
        package var profile: DeviceProfile
        package var description: String
        package var device: DRMDevice?
        package var connector: DRMConnector?
        package var mode: DRMMode?
        package var fbdev: FbdevDisplay?
        /// Where one card drives several screens: the card shared, and the CRTC this screen gets.
        package var seat: DRMSeat?
        package var crtc: UInt32?
    }

    /// One of several screens (`outputs`, or `mirror` on every connected one): its name, the settings its show plays
    /// with, and the screen.
    package struct OpenedOutput {
        package var name: String
        package var settings: Settings
        package var display: OpenedDisplay
        /// The config's entry for this screen; nil for the one screen of a config without `outputs`.
        package var output: OutputSettings?

        package init(name: String, settings: Settings, display: OpenedDisplay, output: OutputSettings? = nil) {
            self.name = name
            self.settings = settings
            self.display = display
            self.output = output
        }
    }

    static func openFbdev(path: String?, table: DeviceTable) throws(PlayError) -> OpenedDisplay {
        let path = path ?? "/dev/fb0"
        let fbdev = try FbdevDisplay(path: path)
        let panel = PanelDescription(mode: fbdev.size)
        // fbdev cannot change the mode, so a profile composing below the native size does not apply.
        let matched = table.profile(for: panel)
        let profile = matched.scanout == fbdev.size ? matched : table.derivedProfile(for: panel, atNativeSize: true)
        let kind = fbdev.doubleBuffered ? "double-buffered by panning" : "one buffer"
        return OpenedDisplay(profile: profile, description: "\(path) at \(fbdev.size) (fbdev, \(kind))", fbdev: fbdev)
    }

    /// Finds the screen and its profile. DRM work here only probes (and takes master); buffers come later, once
    /// the budget is known.
    package static func open(
        _ configuration: PlayConfiguration, log: EventLog, notifier: ServiceNotifier?, signals: SignalSource
    )
        throws(PlayError)
        -> OpenedDisplay
    {
        let table = configuration.deviceTable
        let settings = configuration.settings
        func headless(_ size: Size) -> OpenedDisplay {
            let profile = table.profile(for: PanelDescription(mode: size))
            return OpenedDisplay(profile: profile, description: "a headless \(profile.scanout) panel")
        }
        switch configuration.display {
        case .headless(let size):
            return headless(size)
        case .drm(let path):
            return try openDRMWaiting(
                path: path ?? settings.display.device, settings: settings, table: table, log: log, notifier: notifier,
                signals: signals)
        case .fbdev(let path):
            return try openFbdev(path: path, table: table)
        case .auto:
            let drmProblem: PlayError
            do {
                return try openDRMWaiting(
                    path: settings.display.device, settings: settings, table: table, log: log, notifier: notifier,
                    signals: signals)
            } catch {
                drmProblem = error
            }
            if FileBytes.exists("/dev/fb0") {
                do {
                    let opened = try openFbdev(path: nil, table: table)
                    log(.warning, "no DRM screen (\(drmProblem)); using \(opened.description)")
                    return opened
                } catch {
                    log(.warning, "no fbdev screen either: \(error)")
                }
            }
            let size = settings.display.headlessSize
            log(
                .warning,
                "no DRM screen (\(drmProblem)); using the headless display at \(size): frames stay in memory"
                    + (configuration.snapshots.map { " and go to \($0)/" } ?? " (--snapshots DIR writes them)"))
            return headless(size)
        }
    }

    static func openDRM(path: String?, settings: Settings, table: DeviceTable, log: EventLog) throws(PlayError)
        -> OpenedDisplay
    {
        let candidates = path.map { [$0] } ?? DRMDevice.cardPaths()
        guard !candidates.isEmpty else { throw PlayError("no DRM device in /dev/dri") }
        var problems: [String] = []
        var unplugged = 0
        var renderOnly = 0
        for candidate in candidates {
            let device: DRMDevice
            switch displayCard(candidate) {
            case .success(let card): device = card
            case .failure(let refusal):
                if refusal.renderOnly { renderOnly += 1 }
                problems.append(refusal.problem)
                continue
            }
            guard let connector = DRMDevice.choose(device.connectors(), named: settings.display.connector) else {
                unplugged += 1
                problems.append(
                    "\(candidate): "
                        + (settings.display.connector.map { "no connected connector named \($0)" }
                            ?? "nothing connected"))
                continue
            }
            do {
                try device.becomeMaster()
            } catch {
                problems.append("\(error)")
                continue
            }
            guard let (chosen, profile) = chooseMode(for: connector, settings: settings, table: table, log: log) else {
                continue
            }
            let name = connector.edid?.monitorName.map { " (\($0))" } ?? ""
            return OpenedDisplay(
                profile: profile, description: "\(candidate) \(device.driver) \(connector.name)\(name) at \(chosen)",
                device: device, connector: connector, mode: chosen)
        }
        throw PlayError(
            problems.joined(separator: "; "),
            nothingConnected: unplugged > 0 && unplugged + renderOnly == problems.count)
    }

    /// Why a card cannot drive a screen; `renderOnly` for a card that has no say in whether a screen is connected.
    struct CardRefusal: Error {
        var problem: String
        var renderOnly = false
    }

    /// `candidate` opened as a card that can drive a screen: one that cannot (v3d next to vc4 on a Pi 4/5, vgem, a
    /// driver without dumb buffers) is closed again with why.
    static func displayCard(_ candidate: String) -> Result<DRMDevice, CardRefusal> {
        let device: DRMDevice
        do {
            device = try DRMDevice(path: candidate)
        } catch {
            return .failure(CardRefusal(problem: "\(error)"))
        }
        let missing =
            !device.hasModesetting ? "no display outputs" : !device.supportsDumbBuffers ? "no dumb buffers" : nil
        guard let missing else { return .success(device) }
        device.close()
        return .failure(CardRefusal(problem: "\(candidate) (\(device.driver)): \(missing)", renderOnly: true))
    }

    /// The mode to drive a connector at and its profile: `display.mode` when the connector offers it, else the
    /// preferred one; a profile that composes below that size (4K at 1080p) asks for its smaller mode.
    package static func chooseMode(for connector: DRMConnector, settings: Settings, table: DeviceTable, log: EventLog)
        -> (mode: DRMMode, profile: DeviceProfile)?
    {
        var mode = connector.preferredMode
        if let wanted = settings.display.mode, let (size, refresh) = DisplaySelection.modeParts(wanted) {
            if let match = connector.modes.first(where: {
                $0.size == size && (refresh == nil || $0.refresh == refresh)
            }) {
                mode = match
            } else {
                log("\(connector.name) offers no mode \(wanted); using \(mode.map(\.description) ?? "none")")
            }
        }
        guard var chosen = mode else { return nil }
        var profile = table.profile(for: connector.panel(mode: chosen))
        if profile.scanout != chosen.size {
            if let smaller = connector.modes.first(where: { $0.size == profile.scanout }) {
                chosen = smaller
            } else {
                log(
                    "\(connector.name) has no \(profile.scanout) mode for profile \(profile.id); composing at \(chosen.size)"
                )
                profile = table.derivedProfile(
                    for: PanelDescription(connector: connector.name, mode: chosen.size), atNativeSize: true)
            }
        }
        if let turn = settings.rotation { profile = profile.turned(turn) }
        return (chosen, profile)
    }

    /// Like `openDRM`, but when the cards are there and no screen is connected yet (a kiosk that boots before its
    /// TV is on), waits for a hotplug event, blocked in poll(2), and tries again.
    static func openDRMWaiting(
        path: String?, settings: Settings, table: DeviceTable, log: EventLog, notifier: ServiceNotifier?,
        signals: SignalSource
    ) throws(PlayError) -> OpenedDisplay {
        try waitingForScreens(log: log, notifier: notifier, signals: signals) { () throws(PlayError) in
            try openDRM(path: path, settings: settings, table: table, log: log)
        }
    }

    /// The screens `outputs` names, waiting as `openDRMWaiting` does while none of them is connected.
    package static func openOutputsWaiting(
        _ configuration: PlayConfiguration, log: EventLog, notifier: ServiceNotifier?, signals: SignalSource
    ) throws(PlayError) -> [OpenedOutput] {
        try waitingForScreens(log: log, notifier: notifier, signals: signals) { () throws(PlayError) in
            try openOutputs(configuration, log: log)
        }
    }

    /// Calls `open` until it opens something; while it finds the cards but no screen connected, waits for a hotplug
    /// event (or a signal) in poll(2).
    private static func waitingForScreens<T>(
        log: EventLog, notifier: ServiceNotifier?, signals: SignalSource, _ open: () throws(PlayError) -> T
    ) throws(PlayError) -> T {
        // Made before the first look, so a screen plugged in meanwhile is not missed.
        let monitor = try? HotplugMonitor()
        var announced = false
        while true {
            do {
                return try open()
            } catch {
                guard error.nothingConnected, let monitor else { throw error }
                if !announced {
                    log(.notice, "no screen is connected (\(error)); waiting for one to be plugged in")
                    // Waiting for a screen is the service working as meant, not a start that hangs.
                    notifier?.send("READY=1\nSTATUS=waiting for a screen to be plugged in")
                    announced = true
                }
                var ready = [
                    pollfd(fd: monitor.descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0),
                ]
                let timeout = notifier?.watchdogInterval.map { Int32(min($0 * 1000, 3_600_000)) } ?? -1
                if poll(&ready, 2, timeout) == 0 {
                    notifier?.send("WATCHDOG=1")
                    continue
                }
                if ready[1].revents != 0 {
                    for signal in signals.take() {
                        switch signal {
                        case SIGTERM, SIGINT:
                            notifier?.send("STOPPING=1")
                            throw PlayError("stopping (signal \(signal)) while waiting for a screen", stopped: true)
                        case SIGHUP:
                            // The config is read again when the player starts for real; nothing is on screen yet.
                            log("SIGHUP while waiting for a screen: the settings as started apply")
                        default:
                            break
                        }
                    }
                }
                if ready[0].revents != 0 { _ = monitor.takeChanges() }
            }
        }
    }

    /// Headless stand-ins for the screens `outputs` names, each at its output's mode (else `size`): several shows
    /// with no screen at all, for tests and benchmarks. A mirror without `outputs` gets one.
    package static func headlessOutputs(_ settings: Settings, size: Size, table: DeviceTable) -> [OpenedOutput] {
        let outputs =
            settings.outputs.isEmpty ? [OutputSettings(name: "screen", connector: "screen")] : settings.outputs
        return outputs.map { output in
            let own = settings.mirror ? settings : settings.forOutput(output)
            let mode = output.mode.flatMap(DisplaySelection.modeParts)?.size ?? size
            var profile = table.profile(for: PanelDescription(mode: mode))
            if let turn = own.rotation { profile = profile.turned(turn) }
            return OpenedOutput(
                name: output.name, settings: own,
                display: OpenedDisplay(profile: profile, description: "a headless \(profile.scanout) panel"),
                output: output)
        }
    }

    /// The screens `outputs` names (or, for a mirror without `outputs`, every connected one) on one card, each with a
    /// CRTC of its own and its mode and profile as its output's settings ask; all share the card as one DRM master.
    /// A named screen that is not connected is left out with a log line while another plays; none connected is an
    /// error naming them.
    package static func openOutputs(_ configuration: PlayConfiguration, log: EventLog) throws(PlayError)
        -> [OpenedOutput]
    {
        let settings = configuration.settings
        let table = configuration.deviceTable
        let candidates = settings.display.device.map { [$0] } ?? DRMDevice.cardPaths()
        var problems: [String] = []
        // A card that drives screens was found: none of the named ones is plugged in (yet).
        var sawScreens = false
        for candidate in candidates {
            let device: DRMDevice
            switch displayCard(candidate) {
            case .success(let card): device = card
            case .failure(let refusal):
                problems.append(refusal.problem)
                continue
            }
            let usable = device.connectors().filter { $0.connected && !$0.isWriteback && !$0.modes.isEmpty }
            var wanted: [(OutputSettings, DRMConnector)] = []
            var missing: [String] = []
            if settings.outputs.isEmpty {
                wanted = usable.map { (OutputSettings(name: $0.name, connector: $0.name), $0) }
            } else {
                for output in settings.outputs {
                    if let connector = usable.first(where: {
                        $0.name == output.connector || $0.edid?.monitorName == output.connector
                    }) {
                        wanted.append((output, connector))
                    } else {
                        missing.append("\(candidate): \(output.connector) (output \(output.name)) is not connected")
                    }
                }
            }
            problems += missing
            guard !wanted.isEmpty else {
                sawScreens = true
                device.close()
                continue
            }
            let crtcIDs = device.crtcIDs()
            let current = wanted.map { _, connector in
                device.crtc(for: connector).flatMap { crtcIDs.firstIndex(of: $0) }
            }
            let claims = zip(wanted, current).map { pair, index in
                CRTCAssignment.Connector(id: pair.1.id, possible: pair.1.possibleCRTCs, current: index)
            }
            guard let assigned = CRTCAssignment.assign(claims, crtcCount: crtcIDs.count) else {
                problems.append(
                    "\(candidate): its \(crtcIDs.count) CRTCs cannot drive "
                        + wanted.map(\.1.name).joined(separator: ", ") + " at once")
                device.close()
                continue
            }
            do {
                try device.becomeMaster()
            } catch {
                problems.append("\(error)")
                device.close()
                continue
            }
            for problem in missing { log(.warning, "\(problem); its show is left out until the player restarts") }
            var chosen: [(OutputSettings, DRMConnector, UInt32, DRMMode, DeviceProfile, Settings)] = []
            for ((output, connector), crtc) in zip(wanted, assigned) {
                var placed = settings.mirror ? settings : settings.forOutput(output)
                placed.display.connector = connector.name
                placed.display.mode = output.mode ?? settings.display.mode
                guard let (mode, profile) = chooseMode(for: connector, settings: placed, table: table, log: log) else {
                    continue
                }
                chosen.append((output, connector, crtcIDs[crtc], mode, profile, placed))
            }
            guard !chosen.isEmpty else {
                device.close()
                continue
            }
            // One holder per screen opened: master goes for a VT switch, and the card closes, when all have let go.
            let seat = DRMSeat(device: device, holders: chosen.count)
            let opened = chosen.map { output, connector, crtc, mode, profile, placed in
                let edid = connector.edid?.monitorName.map { " (\($0))" } ?? ""
                return OpenedOutput(
                    name: output.name, settings: placed,
                    display: OpenedDisplay(
                        profile: profile,
                        description: "\(candidate) \(device.driver) \(connector.name)\(edid) at \(mode)",
                        device: device, connector: connector, mode: mode, seat: seat, crtc: crtc),
                    output: output)
            }
            return opened
        }
        throw PlayError(
            "no screen to play on: "
                + (problems.isEmpty ? "no DRM card in /dev/dri" : problems.joined(separator: "; ")),
            nothingConnected: sawScreens)
    }
}
