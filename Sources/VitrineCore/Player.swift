/// The slideshow as a state machine: events in, actions out. It owns no thread, file or device, so tests drive it
/// with a manual clock and assert the actions; the runtime carries the actions out and feeds back the results.
///
/// Rules it keeps: the picture on screen stays until the next one is fully decoded; a photo that fails is skipped
/// with one log line; only the active category's index and frames are held; one flip at a time.
public struct Player {
    public struct Options: Sendable {
        public var interval: Double
        public var order: PlaybackOrder
        public var startCategory: String?
        /// Keep the previous slide's frame too (only when the budget has room, decided by the runtime).
        public var keepPrevious: Bool
        public var seed: UInt64
        /// Seconds the show holds after a key or touch, before it goes on with a full interval.
        public var pauseOnInput: Double
        /// Seconds a crossfade takes (0 for cuts); a slide's interval counts from the end of its fade.
        public var transitionSeconds: Double
        /// The slide to start at (a saved position): its category is shown first, from that slide, when both are
        /// still there.
        public var resume: SlideID?
        /// Whether someone in the room wakes the screen while the schedule holds it off.
        public var wakeOutsideSchedule: Bool
        /// What `shuffle` draws from.
        public var mix: SelectionMix
        /// `shuffle` pairs portrait photos as it draws them (the other orders get pairs from the index).
        public var pairPortraits: Bool
        /// A `shuffle` round saved with the position: taken up when its category is indexed first.
        public var resumeSelection: SelectionState?
        /// Seconds a category chosen by hand holds a day-part off; nil: until the next boundary.
        public var dayPartHold: Double?

        public init(
            interval: Double = 10, order: PlaybackOrder = .name, startCategory: String? = nil,
            keepPrevious: Bool = false, seed: UInt64 = 0x5EED, pauseOnInput: Double = 30, transitionSeconds: Double = 0,
            resume: SlideID? = nil, wakeOutsideSchedule: Bool = false, mix: SelectionMix = .plain,
            pairPortraits: Bool = false, resumeSelection: SelectionState? = nil, dayPartHold: Double? = nil
        ) {
            self.dayPartHold = dayPartHold
            self.mix = mix
            self.pairPortraits = pairPortraits
            self.resumeSelection = resumeSelection
            self.wakeOutsideSchedule = wakeOutsideSchedule
            self.resume = resume
            self.transitionSeconds = transitionSeconds
            self.pauseOnInput = pauseOnInput
            self.interval = interval
            self.order = order
            self.startCategory = startCategory
            self.keepPrevious = keepPrevious
            self.seed = seed
        }
    }

    public enum Event {
        case start(categories: [String], now: Double)
        case indexed(category: String, catalog: SlideCatalog, now: Double)
        case indexFailed(category: String, message: String, now: Double)
        case timerFired(generation: Int, now: Double)
        case decoded(DecodeRequest, Frame, now: Double)
        case decodeFailed(DecodeRequest, message: String, now: Double)
        case flipDone(now: Double)
        case hold(PauseReason, now: Double)
        case release(PauseReason, now: Double)
        /// The system slept and woke (or the process was stopped and continued).
        case woke(now: Double)
        case command(ControlCommand, now: Double)
        case photosAdded([Slide], category: String, now: Double)
        case photosRemoved([SlideID], category: String, now: Double)
        case categoriesChanged([String], now: Double)
        /// The screen changed size: frames made for the old one are useless; the slide on screen is made again.
        case redraw(now: Double)
        /// A key or gesture asked for an action.
        case user(KeyMap.Action, now: Double)
        /// The hold after the last input is over.
        case inputHoldEnded(now: Double)
        /// The room became empty or someone came back (`PresenceMachine`), and why.
        case presence(present: Bool, why: String, now: Double)
        /// Someone moved in front of the sensor or used an input.
        case seen(now: Double)
        /// The date as the frame's wall shows it: at start, and when the day turns or the clock is set.
        case today(ShowDay, now: Double)
        /// A day-part of `playlists` came into force (nil: none is), at its boundary.
        case dayPart(DayParts.Part?, now: Double)
        /// The clip on screen reached its end (or `video.maxSeconds`).
        case clipEnded(SlideID, now: Double)
        /// The clip on screen cannot go on playing: the show moves on.
        case clipFailed(SlideID, message: String, now: Double)

        /// A category read, from a list of slides (tests and small libraries).
        public static func indexed(category: String, slides: [Slide], now: Double) -> Event {
            .indexed(category: category, catalog: SlideCatalog(slides), now: now)
        }

        var now: Double {
            switch self {
            case .start(_, let now), .indexed(_, _, let now), .indexFailed(_, _, let now), .timerFired(_, let now),
                .decoded(_, _, let now), .decodeFailed(_, _, let now), .flipDone(let now), .hold(_, let now),
                .release(_, let now), .woke(let now), .command(_, let now), .photosAdded(_, _, let now),
                .photosRemoved(_, _, let now), .categoriesChanged(_, let now), .redraw(let now), .user(_, let now),
                .inputHoldEnded(let now), .presence(_, _, let now), .seen(let now), .today(_, let now),
                .dayPart(_, let now), .clipEnded(_, let now), .clipFailed(_, _, let now):
                return now
            }
        }
    }

    public enum Action: CustomStringConvertible {
        case index(category: String)
        case decode(DecodeRequest)
        case cancel(SlideID)
        case present(Frame, SlideID)
        case showBackground
        case timer(SlideTimer.Command)
        /// Turn the screen's output off or on (on: a fresh modeset with the picture that was there).
        case screenPower(on: Bool)
        /// Arm (or, with nil, disarm) the end of the hold after input.
        case inputHold(until: Double?)
        /// Tell the viewer the category and slide (a banner; a log line until text rendering arrives).
        case announce(String)
        /// Show the web remote's pairing code for a while (the Info action), where there is a web remote.
        case showPairingCode
        /// A key bound to quit was pressed.
        case quit
        case log(String)
        /// Something the user should fix (a broken photo, a missing category): said once per file, at warning level.
        case warn(String)
        /// The stars changed: to be kept in the state folder.
        case saveFavourites(Favourites)
        /// The clip just presented (its first picture) is to play.
        case playClip(ClipRequest)
        /// The clip on screen is to pause, go on, stop or stop looping.
        case clip(ClipCommand)

        public var description: String {
            switch self {
            case .index(let category): return "index \(category)"
            case .decode(let request): return "decode \(request.purpose.rawValue) \(request.slide.id)"
            case .cancel(let id): return "cancel \(id)"
            case .present(_, let id): return "present \(id)"
            case .showBackground: return "background"
            case .timer(.arm(let deadline, _)): return "arm \(deadline)"
            case .timer(.disarm): return "disarm"
            case .screenPower(let on): return on ? "screen on" : "screen off"
            case .inputHold(let until): return until.map { "hold until \($0)" } ?? "hold off"
            case .announce(let text): return "announce \(text)"
            case .showPairingCode: return "pairing code"
            case .quit: return "quit"
            case .log(let line): return "log \(line)"
            case .warn(let line): return "warn \(line)"
            case .saveFavourites(let favourites):
                return "save favourites (\(favourites.starred.count) starred, \(favourites.unstarred.count) unstarred)"
            case .playClip(let request):
                return "play \(request.slide.id)\(request.loop ? " looping" : "")\(request.paused ? " paused" : "")"
            case .clip(let command): return "clip \(command)"
            }
        }
    }

    public struct Status: Equatable, Sendable {
        public var category: String?
        public var slide: SlideID?
        public var position: Int?
        public var count: Int
        public var paused: [PauseReason]
        public var secondsLeft: Double
        public var framesCached: Int
        public var presented: Int
        /// Why the slide on screen was chosen.
        public var why: SelectionReason?
        /// Whether the slide on screen is a favourite (every photo of a pair).
        public var favourite: Bool
        /// The day-part in force, and whether a category chosen by hand holds it off.
        public var dayPart: String?
        public var heldByHand: Bool
    }

    public private(set) var options: Options
    public private(set) var categories: [String] = []
    public private(set) var active: String?
    public private(set) var playlist: Playlist?
    /// Where the show is: the slide handed to the screen last (on the glass or on its way there); a category switch
    /// clears it at once. What the glass shows is the display's `ScreenContents`.
    public private(set) var current: SlideID?
    /// The slide to show as soon as its frame is ready.
    public private(set) var wanted: SlideID?
    public internal(set) var timer: SlideTimer
    public private(set) var screen: ScreenPower
    public private(set) var presented = 0
    private var cache: [SlideID: Frame] = [:]
    private var inFlight: [SlideID: DecodeRequest] = [:]
    private var generation = 0
    private var flipPending = false
    private var queued: (Frame, SlideID)?
    /// The time of the event being handled.
    var now: Double = 0
    /// The saved slide, until its category has been indexed once.
    private var resumeAt: SlideID?
    /// The saved round, likewise.
    private var resumeSelection: SelectionState?
    /// Starred and unstarred photos (loaded by the runtime, changed by `favourite`).
    public private(set) var favourites: Favourites
    public private(set) var today: ShowDay?
    /// The `shuffle` rounds of categories the show left, by category (a few hundred bytes each).
    private var roundsLeft: [String: SelectionState] = [:]
    /// `playlists`: the day-part in force and its rotation.
    public private(set) var dayParts = DayPartRotation()
    /// The clip on screen (the slide `current` when it is one), whether it plays now and whether it loops.
    public internal(set) var clip: PlayingClip?

    public init(options: Options, favourites: Favourites = Favourites()) {
        self.options = options
        self.favourites = favourites
        resumeSelection = options.resumeSelection
        timer = SlideTimer(interval: options.interval)
        screen = ScreenPower(wakeOutsideSchedule: options.wakeOutsideSchedule)
        resumeAt = options.resume
    }

    public var cachedFrames: Int { cache.count }
    /// A picture is ready and waits for the flip in flight (a crossfade under way should hurry).
    public var hasPictureWaiting: Bool { queued != nil }
    public var decodesInFlight: [SlideID] { Array(inFlight.keys) }

    public func status(now: Double) -> Status {
        Status(
            category: active, slide: current, position: current.flatMap { playlist?.number(of: $0) },
            count: playlist?.count ?? 0, paused: timer.reasons.sorted(), secondsLeft: timer.secondsLeft(now: now),
            framesCached: cache.count, presented: presented, why: current.flatMap { playlist?.reason(of: $0) },
            favourite: current.map(isFavourite) ?? false, dayPart: dayParts.part?.name,
            heldByHand: dayParts.heldUntil != nil)
    }

    public mutating func handle(_ event: Event) -> [Action] {
        now = event.now
        let actions = handleEvent(event)
        return actions + followClip(after: actions)
    }

    private mutating func handleEvent(_ event: Event) -> [Action] {
        switch event {
        case .start(let names, _):
            categories = names
            var actions: [Action] = []
            var first = names.first
            if let resume = resumeAt {
                if names.contains(resume.category) { return switchTo(resume.category) }
                resumeAt = nil
            }
            if let wanted = options.startCategory, !names.isEmpty {
                if names.contains(wanted) {
                    first = wanted
                } else {
                    actions.append(.warn("start category \"\(wanted)\" not found; starting with \(Self.label(first))"))
                }
            }
            guard let first else {
                return actions + [.showBackground, .log("the library has no photos yet; waiting for some to arrive")]
            }
            return actions + switchTo(first)
        case .indexed(let category, let catalog, _):
            guard category == active, playlist == nil else { return [] }
            let left = dayParts.takeLeft(category)
            let kept = roundsLeft.removeValue(forKey: category)
            let saved = left?.selection ?? kept ?? (resumeSelection?.category == category ? resumeSelection : nil)
            resumeSelection = nil
            playlist = Playlist(
                catalog: catalog, order: options.order,
                selection: Playlist.Selection(
                    mix: options.mix, pairPortraits: options.pairPortraits, favourites: favourites, seed: options.seed,
                    today: today, saved: saved))
            // A category a day-part rotated away from goes on after the slide it was left at.
            if let left, playlist?.slide(left.slide) != nil {
                playlist?.moveTo(left.slide)
                if let next = playlist?.next(after: left.slide) { return want(next) }
            }
            let resume = resumeAt
            resumeAt = nil
            if let resume, resume.category == category, playlist?.slide(resume) != nil {
                playlist?.moveTo(resume)
                return [.log("resuming at \(resume)")] + want(resume)
            }
            guard let first = playlist?.first() else {
                current = nil
                return [
                    .showBackground, .log("category \(Self.label(category)) has no photos; waiting for some to arrive"),
                ]
            }
            return want(first)
        case .indexFailed(let category, let message, _):
            guard category == active else { return [] }
            playlist = Playlist(slides: [], order: options.order)
            return [.warn("cannot read category \(Self.label(category)): \(message)")]
        case .timerFired(let fired, let now):
            guard timer.expire(generation: fired, now: now), var playlist else { return [] }
            if let rotated = rotateDayPart(now: now) { return rotated }
            let next = playlist.next()
            self.playlist = playlist
            guard let next, next != current else { return [.timer(timer.restart(now: now))] }
            return want(next)
        case .decoded(let request, let frame, _):
            guard request.generation == generation else { return [] }
            inFlight[request.slide.id] = nil
            let id = request.slide.id
            if id == wanted { return present(frame, id) }
            if prefetchTargets().contains(id) { cache[id] = frame }
            return []
        case .decodeFailed(let request, let message, let now):
            guard request.generation == generation else { return [] }
            let id = request.slide.id
            inFlight[id] = nil
            playlist?.markBroken(id)
            var actions: [Action] = [.warn("skipped \(message)")]
            if id == wanted {
                wanted = nil
                if let next = playlist?.next(after: id), next != current {
                    actions += want(next)
                } else if current == nil {
                    actions += [.showBackground, .log("no photo of category \(Self.label(active)) can be shown")]
                } else {
                    actions.append(.timer(timer.restart(now: now)))
                }
            } else {
                actions += prefetch()
            }
            return actions
        case .flipDone:
            flipPending = false
            guard let (frame, id) = queued else { return [] }
            queued = nil
            flipPending = true
            return [.present(frame, id)]
        case .hold(let reason, let now):
            return timer.pause(reason, now: now).map { [.timer($0)] } ?? []
        case .release(let reason, let now):
            return timer.resume(reason, now: now).map { [.timer($0)] } ?? []
        case .woke(let now):
            let command = timer.resumedFromSleep(now: now)
            return [.log("resumed after sleep; the slide on screen gets a full interval")]
                + (command.map { [.timer($0)] } ?? [])
        case .command(let command, let now):
            return perform(command, now: now)
        case .user(let action, let now):
            return userAction(action, now: now)
        case .inputHoldEnded(let now):
            guard timer.reasons.contains(.inputHold) else { return [] }
            _ = timer.resume(.inputHold, now: now)
            // After the hold the slide on screen gets a full interval, not what was left before the input.
            guard timer.reasons.isEmpty, !timer.expired else { return [] }
            return [.timer(timer.restart(now: now))]
        case .presence(let present, let why, _):
            let wasOn = screen.isOn
            screen.presence(present)
            let line = present ? "somebody is there (\(why))" : "nobody is there (\(why))"
            return applyScreen(wasOn: wasOn, log: line, fullInterval: true)
        case .today(let day, _):
            today = day
            playlist?.setToday(day)
            return []
        case .dayPart(let part, let now):
            return enterDayPart(part, now: now)
        case .clipEnded(let id, let now):
            return clipEnded(id, now: now)
        case .clipFailed(let id, let message, let now):
            guard clip?.id == id else { return [] }
            playlist?.markBroken(id)
            return [.warn("skipped \(message)")] + clipEnded(id, now: now)
        case .seen:
            let wasOn = screen.isOn
            screen.seen()
            return applyScreen(wasOn: wasOn, log: "somebody is there outside the schedule", fullInterval: true)
        case .redraw:
            let was = current
            let actions = dropCategoryState()
            flipPending = false
            queued = nil
            guard let target = was ?? playlist?.first() else { return actions }
            current = nil
            return actions + want(target)
        case .photosAdded(let slides, let category, _):
            guard category == active, playlist != nil else { return [] }
            playlist?.add(slides)
            if current == nil, wanted == nil, let first = playlist?.first() { return want(first) }
            return prefetch()
        case .photosRemoved(let ids, let category, _):
            guard category == active, playlist != nil else { return [] }
            var actions: [Action] = []
            playlist?.remove(Set(ids))
            for id in ids {
                cache[id] = nil
                if inFlight.removeValue(forKey: id) != nil { actions.append(.cancel(id)) }
                if wanted == id {
                    wanted = nil
                    if let next = playlist?.next() { actions += want(next) }
                }
            }
            if playlist?.isEmpty ?? true {
                current = nil
                return actions + [.showBackground, .log("category \(Self.label(active)) has no photos left")]
            }
            return actions + prefetch()
        case .categoriesChanged(let names, _):
            categories = names
            // The library was empty (or its folder gone) and has photos again: the show starts.
            if active == nil, let first = names.first {
                let start = options.startCategory.flatMap { names.contains($0) ? $0 : nil } ?? first
                return [.log("photos arrived; starting with \(Self.label(start))")] + switchTo(start)
            }
            guard let active, !names.contains(active) else { return [] }
            guard let first = names.first else {
                self.active = nil
                playlist = nil
                dropCategoryState()
                current = nil
                return [.showBackground, .log("the library has no photos left")]
            }
            return [.log("category \(Self.label(active)) is gone")] + switchTo(first)
        }
    }

    /// A key or gesture. Navigation holds the timer for `pauseOnInput` seconds (each input starts the hold again);
    /// the pause key holds until pressed again.
    private mutating func userAction(_ action: KeyMap.Action, now: Double) -> [Action] {
        var command: ControlCommand?
        switch action {
        case .next: command = .next
        case .previous: command = .previous
        case .firstSlide: command = .first
        case .nextCategory: command = .category(.next)
        case .previousCategory: command = .category(.previous)
        case .pause: return perform(.toggle, now: now)
        case .quit: return [.log("quit key pressed"), .quit]
        case .info: return [.announce(infoText), .showPairingCode]
        case .screen: return perform(.screen(on: !screen.isOn), now: now)
        default:
            guard let number = action.categoryNumber else { return [] }
            command = .category(.number(number))
        }
        guard let command else { return [] }
        var actions = perform(command, now: now)
        if options.pauseOnInput > 0 {
            if let pause = timer.pause(.inputHold, now: now) { actions.append(.timer(pause)) }
            actions.append(.inputHold(until: now + options.pauseOnInput))
        }
        if case .category = command, let active { actions.append(.announce(Self.label(active))) }
        return actions
    }

    private var infoText: String {
        let slide = current?.name ?? "no photo"
        let position = current.flatMap { playlist?.number(of: $0) }.map { " (\($0) of \(playlist?.count ?? 0))" } ?? ""
        return "\(Self.label(active)): \(slide)\(position)"
    }

    /// New settings (a reloaded config): the interval applies from the next slide; a new order re-reads the
    /// active category.
    public mutating func update(_ newOptions: Options) -> [Action] {
        let reorder =
            newOptions.order != options.order || newOptions.seed != options.seed || newOptions.mix != options.mix
            || newOptions.pairPortraits != options.pairPortraits
        options = newOptions
        screen.wakeOutsideSchedule = newOptions.wakeOutsideSchedule
        timer.changeInterval(to: newOptions.interval)
        guard reorder, let active else { return [] }
        return switchTo(active)
    }

    private mutating func perform(_ command: ControlCommand, now: Double) -> [Action] {
        switch command {
        case .next:
            guard let next = playlist?.next(after: wanted ?? current) else { return [] }
            return want(next)
        case .previous:
            guard let previous = playlist?.previous(before: wanted ?? current) else { return [] }
            return want(previous)
        case .first:
            guard let first = playlist?.first() else { return [] }
            return want(first)
        case .pause:
            return handle(.hold(.user, now: now))
        case .resume:
            return handle(.release(.user, now: now))
        case .toggle:
            return handle(timer.reasons.contains(.user) ? .release(.user, now: now) : .hold(.user, now: now))
        case .interval(let seconds):
            options.interval = seconds
            timer.changeInterval(to: seconds)
            return [.log("interval \(JSONText.number(seconds)) s from the next slide")]
        case .favourite(let star):
            return setFavourite(star)
        case .status, .reload, .rotateToken:
            // Answered by the runtime: the player has nothing to do for them.
            return []
        case .screen(let on):
            let wasOn = screen.isOn
            guard screen.command(on: on) else { return [] }
            var actions = applyScreen(wasOn: wasOn, log: "screen \(on ? "on" : "off")", fullInterval: false)
            if on && !screen.isOn { actions.append(.log("screen on when somebody is there")) }
            return actions
        case .category(let target):
            guard !categories.isEmpty else { return [.log("the library has no categories")] }
            let switched = switchCategory(target)
            guard let part = dayParts.part, switched.contains(where: { if case .index = $0 { true } else { false } })
            else { return switched }
            dayParts.chosenByHand(now: now, hold: options.dayPartHold)
            let until = options.dayPartHold.map { "for \(JSONText.number($0 / 60)) min" } ?? "until the next boundary"
            return switched + [.log("a category chosen by hand holds playlist \"\(part.name)\" off \(until)")]
        }
    }

    private mutating func switchCategory(_ target: ControlCommand.CategoryTarget) -> [Action] {
        let index = active.flatMap { categories.firstIndex(of: $0) } ?? 0
        switch target {
        case .next: return switchTo(categories[(index + 1) % categories.count])
        case .previous: return switchTo(categories[(index + categories.count - 1) % categories.count])
        case .number(let number):
            guard (1...categories.count).contains(number) else { return [.log("there is no category \(number)")] }
            return switchTo(categories[number - 1])
        case .named(let name):
            guard categories.contains(name) else {
                return [
                    .log("no category named \"\(name)\" (have: \(categories.map(Self.label).joined(separator: ", ")))")
                ]
            }
            return switchTo(name)
        }
    }

    /// A day-part came into force at its boundary (or none did): its interval from the next slide, and its first
    /// category at once unless one of its categories is already on screen.
    private mutating func enterDayPart(_ part: DayParts.Part?, now: Double) -> [Action] {
        guard dayParts.part != part else { return [] }
        dayParts.set(part)
        timer.changeInterval(to: part?.interval ?? options.interval)
        guard let part else { return [.log("no playlist in force")] }
        var actions: [Action] = [.log("playlist \"\(part.name)\" in force")]
        guard let target = dayParts.nextCategory(in: categories) else {
            return actions + [.warn("playlist \"\(part.name)\" names no category of the library; the show goes on")]
        }
        if let active, part.categories.contains(where: { $0.name == active }), !dayParts.rotates(in: categories) {
            return actions
        }
        if target != active { actions += leaveForDayPart(target) }
        return actions
    }

    /// At the end of a slide's interval: the next slide's category, when the day-part in force rotates between
    /// several, or when a category chosen by hand has held long enough. Nil: the slide comes from this category.
    private mutating func rotateDayPart(now: Double) -> [Action]? {
        guard dayParts.part != nil else { return nil }
        let wasHeld = dayParts.heldUntil != nil
        guard !dayParts.isHeld(now: now) else { return nil }
        guard wasHeld || dayParts.rotates(in: categories), let target = dayParts.nextCategory(in: categories),
            target != active
        else { return nil }
        return (wasHeld ? [.log("the category chosen by hand has held long enough")] : []) + leaveForDayPart(target)
    }

    /// Switches to `category`, remembering where the category on screen was left (and its round) for its turn.
    private mutating func leaveForDayPart(_ category: String) -> [Action] {
        if let active, let current, current.category == active {
            dayParts.leave(active, at: current, selection: playlist?.savedSelection())
        }
        return switchTo(category)
    }

    /// `{age}` for each photo of a slide chosen for being taken on this day in an earlier year.
    private func ages(_ id: SlideID, _ slide: Slide) -> [String?] {
        guard let today, playlist?.reason(of: id) == .onThisDay else { return [] }
        return slide.photos.map { photo in
            photo.traits.captured ? DecodeRequest.anniversaryText(years: today.yearsSince(photo.timestamp)) : nil
        }
    }

    /// A reloaded config changed how many stars make a favourite.
    public mutating func changeFavouriteRating(to rating: Int) {
        guard favourites.rating != rating else { return }
        favourites.rating = rating
        playlist?.setFavourites(favourites)
    }

    /// Whether every photo of the slide is a favourite.
    private func isFavourite(_ id: SlideID) -> Bool {
        guard let slide = playlist?.slide(id), let catalog = playlist?.catalog else { return false }
        return slide.photos.allSatisfy { photo in
            favourites.contains(
                photo.id, rating: catalog.index(of: photo.id).map { catalog.traits(at: $0).rating } ?? nil)
        }
    }

    /// Stars (or unstars, or toggles) the photos on screen.
    private mutating func setFavourite(_ star: Bool?) -> [Action] {
        guard let id = current, let slide = playlist?.slide(id), let catalog = playlist?.catalog else {
            return [.log("no photo on screen to star")]
        }
        let starred = star ?? !isFavourite(id)
        var changed = false
        for photo in slide.photos {
            let rating = catalog.index(of: photo.id).flatMap { catalog.traits(at: $0).rating }
            changed = favourites.set(photo.id, starred: starred, rating: rating) || changed
        }
        guard changed else { return [.log("\(id) is \(starred ? "already" : "not") a favourite")] }
        playlist?.setFavourites(favourites)
        return [.saveFavourites(favourites), .log(starred ? "starred \(id)" : "unstarred \(id)")]
    }

    public static func label(_ category: String?) -> String {
        guard let category else { return "(none)" }
        return category.isEmpty ? "(library root)" : "\"\(category)\""
    }

    /// Drops the old category's frames, decodes and index, and asks for the new one to be indexed. The picture on
    /// screen stays until the new category's first slide is ready.
    private mutating func switchTo(_ category: String) -> [Action] {
        // A `shuffle` round left for another category goes on when the show comes back to it.
        if let active, let round = playlist?.savedSelection() { roundsLeft[active] = round }
        var actions: [Action] = []
        if active != nil { actions.append(.log("category \(Self.label(category))")) }
        actions += dropCategoryState()
        active = category
        playlist = nil
        if let command = timer.pause(.loading, now: now) { actions.append(.timer(command)) }
        return actions + [.index(category: category)]
    }

    @discardableResult
    private mutating func dropCategoryState() -> [Action] {
        generation += 1
        let cancels = inFlight.keys.sorted { $0.description < $1.description }.map { Action.cancel($0) }
        inFlight = [:]
        cache = [:]
        wanted = nil
        return cancels
    }

    /// Makes `id` the next picture: at once when its frame is ready, else after its decode (sharing one already
    /// under way). The timer waits meanwhile.
    private mutating func want(_ id: SlideID) -> [Action] {
        wanted = id
        var actions: [Action] = []
        if let frame = cache.removeValue(forKey: id) { return present(frame, id) }
        if let command = timer.pause(.loading, now: now) { actions.append(.timer(command)) }
        if inFlight[id] == nil, let slide = playlist?.slide(id) {
            let request = DecodeRequest(slide: slide, generation: generation, purpose: .show, ages: ages(id, slide))
            inFlight[id] = request
            actions.append(.decode(request))
        }
        return actions + dropUnwanted()
    }

    private mutating func present(_ frame: Frame, _ id: SlideID) -> [Action] {
        var actions: [Action] = []
        // The first picture comes up at once (there is nothing to fade from); later ones fade in first.
        let transition = current == nil ? 0 : options.transitionSeconds
        if flipPending {
            queued = (frame, id)
        } else {
            flipPending = true
            actions.append(.present(frame, id))
        }
        current = id
        wanted = nil
        presented += 1
        playlist?.moveTo(id)
        actions += startClip(id, poster: frame)
        actions.append(.timer(timer.restart(now: now, transition: transition)))
        return actions + prefetch()
    }

    /// The slides worth having ready: the next, and the previous when the options allow.
    private mutating func prefetchTargets() -> [SlideID] {
        guard var playlist else { return [] }
        var targets: [SlideID] = []
        if let next = playlist.next(), next != current { targets.append(next) }
        if options.keepPrevious, let previous = playlist.previous(), previous != current, !targets.contains(previous) {
            targets.append(previous)
        }
        self.playlist = playlist
        return targets
    }

    private mutating func prefetch() -> [Action] {
        var actions: [Action] = []
        for id in prefetchTargets() where cache[id] == nil && inFlight[id] == nil {
            guard let slide = playlist?.slide(id) else { continue }
            let request = DecodeRequest(
                slide: slide, generation: generation, purpose: .prefetch, ages: ages(id, slide))
            inFlight[id] = request
            actions.append(.decode(request))
        }
        return actions + dropUnwanted()
    }

    /// Frees frames and cancels decodes of slides that are neither wanted nor worth prefetching any more.
    private mutating func dropUnwanted() -> [Action] {
        var keep = Set(prefetchTargets())
        if let wanted { keep.insert(wanted) }
        for id in cache.keys where !keep.contains(id) { cache[id] = nil }
        var actions: [Action] = []
        for id in inFlight.keys.sorted(by: { $0.description < $1.description }) where !keep.contains(id) {
            inFlight[id] = nil
            actions.append(.cancel(id))
        }
        return actions
    }

    /// Carries a change of `screen` out: the screen's power when it changed, the timer's screen reasons held or
    /// released to match. A screen that comes back for someone gives the slide on it a full interval.
    private mutating func applyScreen(wasOn: Bool, log line: String, fullInterval: Bool) -> [Action] {
        var actions: [Action] = []
        if screen.isOn != wasOn { actions += [.screenPower(on: screen.isOn), .log(line)] }
        let held = screen.heldReasons
        for reason in [PauseReason.screenOff, .absent] where held.contains(reason) != timer.reasons.contains(reason) {
            let command = held.contains(reason) ? timer.pause(reason, now: now) : timer.resume(reason, now: now)
            if let command { actions.append(.timer(command)) }
        }
        if !wasOn, screen.isOn, fullInterval, timer.reasons.isEmpty, current != nil {
            actions = actions.filter { if case .timer = $0 { false } else { true } }
            actions.append(.timer(timer.restart(now: now)))
        }
        return actions
    }
}
