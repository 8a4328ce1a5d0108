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

/// The glue to the parts that talk to the world besides the screen: GPIO buttons and presence, MQTT, the
/// corner overlay, the web remote and HDMI-CEC. Each starts from the settings, and a part that cannot start is a
/// log line while the show goes on.
extension PlayerRuntime {
    /// New buttons or presence settings: the lines are released and requested again (so a line given up is free
    /// at once); the room starts out present, so a screen that an empty room turned off comes back.
    func reopenPresenceAndButtons(_ settings: Settings, now: Double) {
        presenceAndButtons?.close()
        presenceAndButtons = PresenceAndButtons.start(settings: settings, in: loop, now: now, log: log) {
            [unowned self] events in sendAll(events)
        }
        for show in shows where show.player.screen.absent {
            show.send(.presence(present: true, why: "presence settings changed", now: now))
        }
    }

    /// Connects to the broker the settings name. Settings that cannot be used (a credentials file others can
    /// read, a TLS file missing) are logged and the show goes on without MQTT.
    func startMQTT(_ settings: Settings) {
        guard let mqttSettings = settings.mqtt else { return }
        let loaded = libraryLoader.ready([.mosquitto]) { [unowned self] in
            if mqtt == nil { startMQTT(configuration.settings) }
        }
        guard loaded else { return }
        let link: MQTTLink
        do {
            link = try MQTTLink(
                settings: mqttSettings, profile: show.profileNow.id,
                outputs: hasOutputShows ? shows.map { ($0.name, $0.profileNow.id) } : [],
                overlayTopics: Array(Set(shows.flatMap { $0.live?.topics ?? [] })).sorted(), log: log)
        } catch {
            log(.error, "\(error); the show goes on without MQTT")
            return
        }
        link.answer = { [unowned self] line, authority, setting in
            self.answer(line, authority: authority, setting: setting)
        }
        link.overlayMessage = { [unowned self] topic, payload in
            for show in self.shows {
                show.live?.received(topic: topic, payload: payload, now: MonotonicClock.seconds())
            }
        }
        do {
            try link.start(in: loop, now: MonotonicClock.seconds())
        } catch {
            log(.error, "MQTT: \(error); the show goes on without MQTT")
            link.close()
            return
        }
        mqtt = link
        tellMQTT()
        if link.wantsSlidePictures, !slidePictures.coming {
            if let latest = slidePictures.latest {
                link.slidePicture(.success(latest), now: MonotonicClock.seconds())
            } else {
                submitSlidePicture()
            }
        }
    }

    /// Listens for the web remote. A port in use or a missing certificate is one log line; the show goes on.
    func startWeb(_ settings: Settings) {
        guard let webSettings = settings.web else { return }
        // The QR code of the pairing screen is the web remote's, drawn on the loop: its library comes in with it.
        let loaded = libraryLoader.ready([.microhttpd, .qrencode]) { [unowned self] in
            if web == nil { startWeb(configuration.settings) }
        }
        guard loaded else { return }
        let remote: WebRemote
        do {
            remote = try WebRemote(
                settings: webSettings, library: show.library, budget: budget,
                renditionCache: StateDirectory.renditionCacheFolder(settings: settings),
                stateFolder: StateDirectory.path, maxMegapixels: settings.maxMegapixels, log: log)
        } catch {
            log(.error, "\(error); the show goes on without the web remote")
            return
        }
        remote.owner = WebRemote.Owner(
            status: { [unowned self] output in
                addressedShow(output).map { show in
                    self.statusLine(of: output == nil ? nil : show, now: MonotonicClock.seconds())
                }
            },
            answer: { [unowned self] line in
                self.answer(line, authority: self.web?.settings.commands ?? .none, setting: "web.commands")
            },
            metrics: { [unowned self] in MetricsWriter.render(self.currentFigures()) },
            activeCategory: { [unowned self] output in
                addressedShow(output).map { show in
                    (show.player.active, output == nil ? nil : show.player.categories)
                }
            },
            slidePicture: { [unowned self] output in
                addressedShow(output).map { show in slidePicture(of: show) }
            })
        remote.renditions = show.follower.renditionMaker
        remote.libraryChanged = { [unowned self] placed in
            let show = self.show
            show.sendAll(show.follower.placed(placed, show: show.followedShow, now: MonotonicClock.seconds()))
        }
        do {
            try remote.start(in: loop)
        } catch {
            log(.error, "web remote: \(error); the show goes on without it")
            remote.close()
            return
        }
        web = remote
        if !slidePictures.coming, slidePictures.latest == nil { submitSlidePicture() }
        for show in shows.dropFirst() where show.pictures?.latest == nil { show.makePicture() }
    }

    /// The show an output's name addresses (nil: the first screen's); a mirror's other screens play the first's.
    func addressedShow(_ output: String?) -> Result<Show, WebRemote.OutputUnknown> {
        guard let output else { return .success(show) }
        if let named = shows.first(where: { $0.name == output }) { return .success(named) }
        if show.mirrors?.screens.contains(where: { $0.name == output }) == true { return .success(show) }
        let have = shows.map(\.name) + (show.mirrors?.screens.map(\.name) ?? [])
        return .failure(WebRemote.OutputUnknown(name: output, have: have))
    }

    /// The picture of a show's slide for the web remote: the first screen's is made at every slide (MQTT's image
    /// topic shares it); another show's at each of its slides while the web remote is on (`Show.makePicture`).
    func slidePicture(of show: Show) -> (jpeg: [UInt8]?, coming: Bool) {
        if show === self.show { return (slidePictures.latest, slidePictures.coming) }
        return (show.pictures?.latest, show.pictures?.coming ?? false)
    }

    /// Whether anything shows the slide's picture elsewhere.
    var wantsSlidePictures: Bool { web != nil || mqtt?.wantsSlidePictures == true }

    /// Has the picture of the slide on screen made for the image topic and the web remote's page: at each new
    /// slide, and when one of them starts (a reload) with none made, so it need not wait a whole interval. False
    /// when nobody wants it or the slide is gone.
    @discardableResult
    func submitSlidePicture() -> Bool {
        guard wantsSlidePictures else { return false }
        return slidePictures.make(from: show.display.screen.slideFrame)
    }

    /// Opens the CEC adapter the settings ask for (a missing one is one log line; the show goes on).
    func startCEC(_ settings: Settings) {
        guard let cecSettings = settings.cec else { return }
        let screen = (show.display.executor as? DRMDisplay).map {
            (cardPath: $0.cardPath, connectorID: $0.connector.id)
        }
        guard
            let link = CECLink.start(
                settings: cecSettings, screen: screen, screenOn: show.player.screen.isOn, log: log)
        else { return }
        do {
            try link.register(in: loop) { [unowned self] outcomes, now in applyCEC(outcomes, now: now) }
        } catch {
            log(.warning, "CEC: \(error); the TV will not follow the screen")
            link.close()
            return
        }
        cec = link
    }

    /// What the bus means for the show: the TV off or showing another device holds it, its remote's keys act
    /// as the keyboard's (through the same key map), and count as someone in the room. The adapter is the first
    /// screen's port's (`startCEC`): where each screen has a show, only that screen's show follows its TV.
    func applyCEC(_ outcomes: [CECLink.Outcome]?, now: Double) {
        let targets = hasOutputShows ? [show] : shows
        for outcome in outcomes ?? [] {
            switch outcome {
            case .hold(let reason):
                for show in targets { show.send(.hold(reason, now: now)) }
            case .release(let reason):
                for show in targets { show.send(.release(reason, now: now)) }
            case .key(let name):
                guard let action = configuration.settings.keys.action(forKey: name) else {
                    log("CEC: remote key \(name) is not bound to anything (keys in vitrine.json)")
                    continue
                }
                for show in targets { show.send(.user(action, now: now)) }
                sendAll(presenceAndButtons?.activity(now: now, wakes: action != .screen))
            }
        }
    }

    /// Starts following the sources' syncs (each in a process of its own), the first at once.
    func startSyncs(_ settings: Settings) {
        guard !settings.sources.isEmpty else { return }
        guard let configPath = configuration.configPath else {
            log(.warning, "sources: the player was started without a config file, which the syncs read; none runs")
            return
        }
        let now = MonotonicClock.seconds()
        do {
            let syncs = try SourceSyncs(
                sources: settings.sources, configPath: configPath, libraryRoot: show.library.root,
                rendition: (show.profileNow.rendition, settings.fit ?? show.profileNow.fit), loop: loop, log: log,
                now: now)
            self.syncs = syncs
            syncs.start(now: now)
        } catch {
            log(.warning, "sources will not sync: \(error)")
        }
    }

    /// The show's state and categories as they are after this turn, for the broker (sent only when changed).
    /// Runs after every turn of the loop (each step of a fade too), so it reads only what is at hand; the slide's
    /// place in the playlist, which takes a walk through the round, is looked up only when the slide or the
    /// playlist's size changed.
    func tellMQTT() {
        guard let mqtt else { return }
        let now = MonotonicClock.seconds()
        mqtt.categoriesAre(show.player.categories)
        mqtt.stateIs(mqttState(of: show, now: now), now: now)
        guard hasOutputShows else { return }
        for show in shows {
            mqtt.categoriesAre(show.player.categories, output: show.name)
            mqtt.stateIs(mqttState(of: show, now: now), output: show.name, now: now)
        }
    }

    /// Whether each screen has a show of its own (`outputs` without `mirror`): then each has its own topics and Home
    /// Assistant device beside the player's, which speaks for the first and takes commands for all.
    var hasOutputShows: Bool { !configuration.settings.mirror && !configuration.settings.outputs.isEmpty }

    private func mqttState(of show: Show, now: Double) -> MQTTState {
        let player = show.player
        let slide = player.current
        let count = player.playlist?.count ?? 0
        if show.mqttPosition?.slide != slide || show.mqttPosition?.count != count {
            show.mqttPosition = (slide, count, slide.flatMap { player.playlist?.number(of: $0) })
        }
        var state = MQTTState(
            category: player.active, slide: slide?.name, position: show.mqttPosition?.position, count: count,
            paused: player.timer.reasons.sorted(), screenOn: show.display.isPoweredOn && player.screen.isOn,
            present: presenceAndButtons?.isPresent, interval: player.options.interval, profile: show.profileNow.id)
        let status = player.status(now: now)
        state.why = status.why?.rawValue
        state.favourite = status.favourite
        state.playlist = status.dayPart
        state.sources = (syncs?.machines ?? []).map { machine in
            guard let running = machine.running else {
                return MQTTState.Source(name: machine.name, state: machine.state.name)
            }
            return MQTTState.Source(
                name: machine.name, state: "syncing", progress: running.listing ? nil : (running.done, running.total))
        }
        return state
    }
}

/// The corner's clock, date and texts on a show's screen.
extension Show {
    /// The clock, date and MQTT texts in a corner, when the settings ask for any of them.
    func startOverlay() {
        guard let overlaySettings = settings.overlay else { return }
        let live: LiveOverlay
        do {
            live = try LiveOverlay(
                settings: overlaySettings, locale: settings.locale ?? DateStyle.processDefault(), log: log)
            try live.register(in: house.loop)
        } catch {
            log(.error, "overlay: \(error); the show goes on without the clock and texts")
            return
        }
        self.live = live
        makeCorner()
        clockSeesScreen = nil
        live.start(now: MonotonicClock.seconds())
        log("overlay: \(live.summary) in the \(overlaySettings.corner.rawValue) corner")
    }

    /// New overlay settings: the corner is drawn anew; the texts keep their values unless they changed (then the
    /// MQTT link subscribes again and the broker's retained messages bring them back).
    func followOverlaySettings(now: Double) {
        guard let live, let overlaySettings = settings.overlay else {
            live?.close()
            live = nil
            overlay.corner = nil
            startOverlay()
            return
        }
        live.update(overlaySettings, locale: settings.locale ?? DateStyle.processDefault(), now: now)
        makeCorner()
        log("overlay: \(live.summary) in the \(overlaySettings.corner.rawValue) corner")
    }

    /// The corner's renderer for the canvas as it is now (again after a replug to another size). Its font is read
    /// off the loop once the loop runs; until it is there, the corner keeps its old renderer, which draws only on
    /// the canvas it was made for.
    func makeCorner() {
        cornerRequests += 1
        let request = cornerRequests
        house.makeCorner(settings: settings, canvas: profileNow.compose, into: overlay) { [unowned self] in
            // A newer request (another replug, other settings) or the overlay turned off since: this one is stale.
            request != cornerRequests || live == nil
        }
    }

    /// Tells the clock whether the screen is lit (off, away or unplugged, it sleeps) and gives the corner its lines.
    func followOverlay() {
        guard let live else { return }
        let lit = display.isLit || mirrors?.screens.contains { $0.display.isLit } == true
        if lit != clockSeesScreen {
            clockSeesScreen = lit
            live.screen(on: lit)
        }
        overlay.cornerLines = live.lines(now: MonotonicClock.seconds())
    }
}

/// The text renderers a screen's overlay needs, made off the loop.
extension PlayerRuntime {
    /// The corner's renderer for `canvas`, given to `overlay` unless `stale` says a newer one was asked for since.
    /// Until it is there, the corner keeps its old renderer, which draws only on the canvas it was made for.
    func makeCorner(
        settings: Settings, canvas: Size, into overlay: TextOverlay, stale: @escaping () -> Bool
    ) {
        guard let overlaySettings = settings.overlay else { return }
        let fontPath = settings.fontPath ?? TextRenderer.defaultFont
        libraryLoader.make({ () throws(FileError) in
            try CornerOverlay(settings: overlaySettings, canvas: canvas, fontPath: fontPath)
        }) { [unowned self] result in
            guard !stale() else { return }
            switch result {
            case .success(let corner):
                overlay.corner = corner
            case .failure(let error):
                log(.warning, "overlay: no clock or texts on screen (\(error))")
                overlay.corner = nil
            }
        }
    }

    /// The banner's renderer, made when the first banner or pause sign is due (most shows never put text on screen,
    /// and FreeType with its font is a megabyte of the player's memory): read on a worker, and `then` puts the text
    /// up a moment later. A font that cannot be loaded is one warning.
    func loadBannerFont(
        settings: Settings, canvas: Size, into overlay: TextOverlay, then: @escaping () -> Void
    ) {
        let fontPath = settings.fontPath ?? TextRenderer.defaultFont
        let pixelHeight = max(12, canvas.height / 16)
        libraryLoader.make({ () throws(FileError) in
            try TextRenderer(fontPath: fontPath, pixelHeight: pixelHeight)
        }) { [unowned self] result in
            switch result {
            case .success(let renderer):
                overlay.renderer = renderer
                then()
            case .failure(let error):
                log(.warning, "no on-screen text (\(error)); banners go to the log only")
            }
        }
    }
}
