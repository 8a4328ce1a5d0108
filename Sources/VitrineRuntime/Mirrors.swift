import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrineLibrary
import VitrinePlatform

/// The other screens of a mirror, kept on the show's slide. They are grouped by how their pictures are made: a
/// group at the show's own size takes the show's frames as they are, and each other size has one decode worker of
/// its own, fed the requests the show submits (so a slide is decoded once per distinct size, ahead of time like the
/// show's). Each screen flips on its own vblank when the show presents; a larger screen's decode that is late shows
/// the moment it is ready.
final class Mirrors {
    final class Group {
        let options: RenderOptions
        /// Nil for the show's own size.
        let worker: DecodeWorker?
        var follower = MirrorFollower<Frame>()
        var screens: [MirrorScreen] = []
        var source: EventLoop.Source?
        /// What the group last put up, for a screen that joins it.
        var shown: (frame: Frame, record: PresentRecord)?

        init(options: RenderOptions, worker: DecodeWorker?) {
            self.options = options
            self.worker = worker
        }
    }

    unowned let show: Show
    let screens: [MirrorScreen]
    private var groups: [Group] = []
    private let crashGuard: CrashGuard
    /// The show's slide on screen, its request and its record (for a group made later: a screen replugged at
    /// another size).
    private var current: (request: DecodeRequest?, frame: Frame, record: PresentRecord)?
    private var requests: [SlideID: DecodeRequest] = [:]
    private var background = false

    init(show: Show, screens: [MirrorScreen], crashGuard: CrashGuard) {
        self.show = show
        self.screens = screens
        self.crashGuard = crashGuard
    }

    private var house: PlayerRuntime { show.house }

    /// Groups the screens by how their pictures are made; a screen that changes group is given the slide on the
    /// show's screen at once (its group's picture, or a decode at its size).
    func regroup() throws(PlayError) {
        let own = show.renderOptions
        var kept: [Group] = []
        var joined: [(MirrorScreen, Group)] = []
        for screen in screens {
            let options = screen.renderOptions(places: house.places)
            let previous = groups.first { $0.screens.contains { $0 === screen } }
            let group: Group
            if let found = kept.first(where: { $0.options == options }) {
                group = found
            } else if let reused = groups.first(where: {
                $0.options == options && ($0.worker == nil) == (options == own)
            }) {
                reused.screens = []
                group = reused
                kept.append(group)
            } else {
                group = try makeGroup(options, own: options == own)
                kept.append(group)
            }
            group.screens.append(screen)
            if previous !== group { joined.append((screen, group)) }
        }
        for old in groups where !kept.contains(where: { $0 === old }) {
            old.worker?.stop()
            house.loop.remove(old.source)
        }
        groups = kept
        for (screen, group) in joined { catchUp(screen, in: group) }
    }

    private func makeGroup(_ options: RenderOptions, own: Bool) throws(PlayError) -> Group {
        guard !own else { return Group(options: options, worker: nil) }
        let group: Group
        do {
            let worker = try DecodeWorker(
                budget: house.budget, options: options,
                fontPath: show.settings.fontPath ?? TextRenderer.defaultFont, crashGuard: crashGuard)
            group = Group(options: options, worker: worker)
            group.source = try house.loop.add(worker.wakeup.descriptor) { [unowned self, unowned group] _ in
                for outcome in worker.takeOutcomes() { deliver(outcome, to: group) }
            }
        } catch {
            throw PlayError("\(error)")
        }
        show.log("mirror: pictures for \(options.canvas) screens are decoded on a worker of their own")
        return group
    }

    /// A screen new to its group shows what the show shows.
    private func catchUp(_ screen: MirrorScreen, in group: Group) {
        if background { screen.showBackground(show.renderOptions.background) }
        if group.worker == nil {
            if let current { screen.show(current.frame, current.record) }
            return
        }
        // On its way to every screen of the group.
        if group.follower.wanted != nil { return }
        if let shown = group.shown, shown.frame.size == screen.display.size {
            screen.show(shown.frame, shown.record)
            return
        }
        guard let current, let request = current.request else { return }
        perform(group.follower.showDecodes(request), in: group)
        perform(group.follower.showPresents(request.slide.id), in: group)
    }

    /// The show submitted a decode to its worker.
    func showDecodes(_ request: DecodeRequest) {
        requests = requests.filter { $0.value.generation >= request.generation }
        requests[request.slide.id] = request
        for group in groups where group.worker != nil { perform(group.follower.showDecodes(request), in: group) }
    }

    func showCancels(_ id: SlideID) {
        requests[id] = nil
        for group in groups where group.worker != nil { perform(group.follower.showCancels(id), in: group) }
    }

    /// The show presented `frame` (slide `id`) on its screen.
    func showPresents(_ frame: Frame, _ record: PresentRecord, id: SlideID) {
        background = false
        let same = current.map { $0.record.category == id.category && $0.record.slide == id.name } ?? false
        current = (requests.removeValue(forKey: id) ?? (same ? current?.request : nil), frame, record)
        for group in groups {
            if group.worker == nil {
                group.shown = (frame, record)
                for screen in group.screens { screen.show(frame, record) }
            } else {
                perform(group.follower.showPresents(id), in: group)
            }
        }
    }

    func showShowsBackground() {
        background = true
        current = nil
        for group in groups {
            group.shown = nil
            if group.worker == nil {
                for screen in group.screens { screen.showBackground(show.renderOptions.background) }
            } else {
                perform(group.follower.showShowsBackground(), in: group)
            }
        }
    }

    private func deliver(_ outcome: DecodeWorker.Outcome, to group: Group) {
        switch outcome.result {
        case .success(let frame): perform(group.follower.decoded(outcome.request, frame), in: group)
        case .failure(let error):
            perform(group.follower.decodeFailed(outcome.request, message: "\(error)"), in: group)
        }
    }

    private func perform(_ actions: [MirrorFollower<Frame>.Action], in group: Group) {
        for action in actions {
            switch action {
            case .decode(let request): group.worker?.submit(request)
            case .cancel(let id): group.worker?.cancel(id)
            case .show(let frame, let id):
                let record =
                    current.flatMap {
                        $0.record.category == id.category && $0.record.slide == id.name ? $0.record : nil
                    }
                    ?? PresentRecord(category: id.category, slide: id.name, file: nil, decodeMilliseconds: nil)
                group.shown = (frame, record)
                for screen in group.screens where screen.display.size == frame.size { screen.show(frame, record) }
            case .showBackground:
                group.shown = nil
                for screen in group.screens { screen.showBackground(show.renderOptions.background) }
            case .warn(let line):
                show.log(.warning, "mirror (\(group.options.canvas) screens): \(line)")
            }
        }
    }

    func drain() {
        for screen in screens { screen.drain(house: house, background: show.renderOptions.background) }
    }

    func setPower(_ on: Bool) {
        for screen in screens { screen.display.setPower(on) }
    }

    func announce(_ line: String, now: Double) {
        for screen in screens { screen.overlay.announce(line, now: now) }
    }

    /// Whether every mirrored screen is unplugged (the show holds only when its own is too).
    var allUnplugged: Bool { screens.allSatisfy(\.unplugged) }

    /// Screens plugged in or out; one back at another size is regrouped and given the slide at its new size.
    func screensChanged(now: Double) {
        var resized = false
        for screen in screens {
            if screen.screenChanged(table: house.configuration.deviceTable, log: show.log, now: now) {
                screen.makeCorner(house: house)
                resized = true
            }
        }
        if resized { regroupLogged() }
    }

    /// `regroup`, with a worker that cannot be made told in the log: the screens of that size keep their picture.
    func regroupLogged() {
        do {
            try regroup()
        } catch {
            show.log(.warning, "mirror: \(error)")
        }
    }

    /// New settings from a reload: each screen keeps its connector, mode and rotation; fades and the corner follow,
    /// and the groups are made again for the pictures as they are now made.
    func reload(_ new: Settings) {
        for screen in screens {
            var own = new
            own.display.connector = screen.settings.display.connector
            own.display.mode = screen.settings.display.mode
            own.rotation = screen.settings.rotation
            let cornerChanged = own.overlay != screen.settings.overlay || own.locale != screen.settings.locale
            screen.settings = own
            screen.display.fadeSeconds = Show.fadeSeconds(
                own, profile: screen.profileNow, budget: house.budget, blendsCleanly: screen.display.blendsCleanly,
                screen: screen.screenDescription, log: show.log)
            if cornerChanged {
                if own.overlay == nil { screen.overlay.corner = nil } else { screen.makeCorner(house: house) }
            }
        }
        regroupLogged()
    }

    func close() {
        for screen in screens { screen.display.close() }
        for group in groups { group.worker?.stop() }
    }
}
