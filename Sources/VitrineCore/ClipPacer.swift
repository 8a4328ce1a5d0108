/// When each picture of a playing clip goes to the screen, as a value: the runtime hands it the pictures' times
/// (seconds of clip time) and the screen's vblanks, and it says which picture to flip to, which to drop and when
/// to look again. Times are CLOCK_MONOTONIC seconds.
///
/// A picture is due at `anchor + its time`. A flip asked for now reaches the glass at the next vblank, so the
/// picture to flip to is the latest one due by then (half a vblank of leeway: a 30 fps clip on a 60 Hz panel
/// shows each picture for two vblanks, not one then three); the ones before it are dropped, never queued, so a
/// slow moment costs pictures, not the clip's pace. Pausing keeps the clip's place; resuming moves the anchor.
public struct ClipPacer: Sendable, Equatable {
    public enum Decision: Equatable, Sendable {
        /// Flip to the picture at this position of the waiting list now; the ones before it are dropped.
        case show(index: Int, dropping: Int)
        /// Nothing is due by the next vblank: look again at this time.
        case wait(until: Double)
        /// No picture waits (the decoder is behind, or the clip has ended).
        case idle
        /// Paused: the picture on screen stays.
        case paused
    }

    /// What the clip's playing came to, for `status`, the metrics and the tests.
    public struct Figures: Equatable, Sendable {
        public var presented = 0
        public var dropped = 0
        /// Pictures that reached the glass more than one vblank after they were due.
        public var late = 0
        /// The worst such lateness in seconds (0 when every picture made its vblank).
        public var worstLateness = 0.0
        public init() {}
    }

    /// The monotonic time of clip time 0, while playing.
    public private(set) var anchor: Double?
    /// The clip time reached when paused.
    public private(set) var pausedAt: Double?
    /// The screen's refresh period; 0 where there is no vblank (a headless display shows at once).
    public private(set) var refresh: Double
    /// The last vblank a flip completed at, where the driver reports it.
    public private(set) var lastVblank: Double?
    public private(set) var figures = Figures()

    public init(refresh: Double) {
        self.refresh = refresh
    }

    public var isPaused: Bool { pausedAt != nil }

    /// The clip starts: its picture at `firstTime` is due at the first vblank at least a whole vblank away, so it
    /// is handed to the display no later than a vblank before it. A first picture handed 10 ms before its vblank
    /// (more than the half vblank asked before) reached the glass two vblanks late on a busy guest (vm-pacing): the
    /// clip's first flip also pays for the first touch of its buffers.
    public mutating func start(now: Double, firstTime: Double = 0) {
        anchor = onVblanks(firstGlass(now: now) - firstTime)
        pausedAt = nil
    }

    /// The first vblank a picture asked for now can make with a whole vblank to be painted.
    private func firstGlass(now: Double) -> Double {
        let glass = glassTime(now: now)
        return glass - now < refresh ? glass + refresh : glass
    }

    /// A flip completed at this vblank (one of the clip's or the slide's own): the vblanks' phase.
    public mutating func sawVblank(at time: Double) { lastVblank = time }

    public mutating func pause(now: Double) {
        guard let anchor, pausedAt == nil else { return }
        pausedAt = now - anchor
        self.anchor = nil
    }

    /// Goes on from where it was paused, the picture after the pause due about the next vblank: the anchor keeps
    /// the vblanks' phase, so a picture that misses its vblank is one vblank late, not one and a fraction.
    public mutating func resume(now: Double) {
        guard let pausedAt else { return }
        anchor = onVblanks(firstGlass(now: now) - pausedAt)
        self.pausedAt = nil
    }

    /// `anchor` moved by less than half a vblank onto the vblanks' grid: clip time 0 falls on a vblank, and so does
    /// every picture of a clip whose rate divides the refresh rate.
    private func onVblanks(_ anchor: Double) -> Double {
        guard refresh > 0, let lastVblank else { return anchor }
        return lastVblank + ((anchor - lastVblank) / refresh).rounded() * refresh
    }

    /// Where the clip is (seconds of clip time).
    public func position(now: Double) -> Double { pausedAt ?? anchor.map { now - $0 } ?? 0 }

    /// When a picture of clip time `time` is due on the glass.
    public func due(_ time: Double) -> Double? { anchor.map { $0 + time } }

    /// When a flip asked for at `now` reaches the glass: the next vblank after it (at once without vblanks).
    public func glassTime(now: Double) -> Double {
        guard refresh > 0, let lastVblank, now >= lastVblank else { return now }
        let periods = ((now - lastVblank) / refresh).rounded(.down) + 1
        return lastVblank + periods * refresh
    }

    /// Which of the waiting pictures (their clip times, in order) to flip to now.
    public func decide(waiting times: [Double], now: Double) -> Decision {
        guard pausedAt == nil, let anchor else { return .paused }
        guard let first = times.first else { return .idle }
        let glass = glassTime(now: now)
        let leeway = refresh / 2
        var chosen: Int?
        for (index, time) in times.enumerated() where anchor + time <= glass + leeway { chosen = index }
        if let chosen { return .show(index: chosen, dropping: chosen) }
        // Look again one vblank before the picture is due, so the flip asked for then lands on its vblank.
        return .wait(until: max(now, anchor + first - refresh - leeway))
    }

    /// `dropped` pictures were passed over.
    public mutating func dropped(_ count: Int) { figures.dropped += count }

    /// A picture of clip time `time` reached the glass at `glass` (the flip's vblank, or now without one).
    public mutating func shown(time: Double, glass: Double, vblank: Bool) {
        figures.presented += 1
        if vblank { lastVblank = glass }
        guard let due = due(time) else { return }
        let lateness = glass - due
        // More than one vblank after it was due (a frame of 60 Hz where there are none to count).
        if lateness > (refresh > 0 ? refresh : 1.0 / 60) + 0.001 {
            figures.late += 1
            figures.worstLateness = max(figures.worstLateness, lateness)
        }
    }

    /// The screen's refresh period, once known (from the mode, or measured between vblanks).
    public mutating func setRefresh(_ seconds: Double) { refresh = max(0, seconds) }
}
