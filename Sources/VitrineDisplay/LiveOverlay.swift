import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The overlay's lines as they should be now: the clock and date (`ClockMachine`, woken by a wall-clock timer at
/// each local minute, and at once when the clock is set or the system resumes, which cancels that timer), and the
/// MQTT texts (`OverlayTexts`, with a timer for the next one to go stale). The loop asks for `lines` after each turn
/// and paints them when they changed.
package final class LiveOverlay {
    private enum Source {
        case minute, stale, zone
    }

    private(set) var settings: OverlaySettings
    private var clock: ClockMachine
    private(set) var texts: OverlayTexts
    private var clockLines: [String] = []
    private let minuteTimer: WallClockTimer
    private let staleTimer: MonotonicTimer
    /// Nil where `/etc` cannot be watched: a new zone then shows at the next minute.
    private let zone: TimeZoneWatcher?
    private let log: EventLog
    private var sources: LoopSources?
    /// Minute redraws since start (`/metrics`, the benchmark).
    private(set) var minuteRedraws = 0

    package init(settings: OverlaySettings, locale: DateStyle, log: EventLog) throws(RuntimeError) {
        self.settings = settings
        self.log = log
        clock = ClockMachine(settings: Self.clockSettings(settings, locale: locale))
        texts = OverlayTexts(texts: settings.texts)
        minuteTimer = try WallClockTimer()
        staleTimer = try MonotonicTimer()
        zone = settings.clock == .off && !settings.date ? nil : try? TimeZoneWatcher()
    }

    static func clockSettings(_ settings: OverlaySettings, locale: DateStyle) -> ClockMachine.Settings {
        ClockMachine.Settings(clock: settings.clock.format(locale: locale), date: settings.date ? locale : nil)
    }

    /// Watches its timers and the zone in `loop`.
    package func register(in loop: EventLoop) throws(RuntimeError) {
        var sources = LoopSources(loop)
        let watched: [(Int32, Source)] =
            [(minuteTimer.descriptor, .minute), (staleTimer.descriptor, .stale)]
            + (zone.map { [($0.descriptor, .zone)] } ?? [])
        for (descriptor, source) in watched {
            try sources.add(descriptor) { [unowned self] _ in handle(source, now: MonotonicClock.seconds()) }
        }
        self.sources = sources
    }

    /// Leaves the loop (new settings without an overlay).
    package func close() {
        sources?.removeAll()
        sources = nil
    }

    /// What it shows, for the log: `clock HH:mm, the date, 2 texts from MQTT`.
    package var summary: String {
        var parts: [String] = []
        if let format = clock.settings.clock { parts.append("clock \(format.pattern)") }
        if clock.settings.date != nil { parts.append("the date") }
        if !settings.texts.isEmpty { parts.append("\(settings.texts.count) text(s) from MQTT") }
        return parts.isEmpty ? "nothing to show" : parts.joined(separator: ", ")
    }

    /// The topics the texts come from.
    package var topics: [String] { texts.topics }

    /// What goes in the corner now: the clock large, then the date, then the texts that are fresh.
    package func lines(now: Double) -> [CornerOverlay.Line] {
        CornerOverlay.lines(clock: clockLines, clockIsOn: clock.settings.clock != nil, texts: texts.lines(now: now))
    }

    /// Reads the wall clock and arms the minute timer.
    package func start(now: Double) {
        apply(clock.tick(LocalTime.now()))
        armStale(now: now)
    }

    private func handle(_ source: Source, now: Double) {
        switch source {
        case .minute:
            // Cancelled (the clock was set, or the system resumed) or due: either way the time is read again.
            if minuteTimer.acknowledge() { log("overlay: the wall clock jumped; the clock reads it again") }
            minuteRedraws += 1
            apply(clock.tick(LocalTime.now()))
        case .stale:
            staleTimer.acknowledge()
            armStale(now: now)
        case .zone:
            guard zone?.takeChange() == true else { return }
            log("overlay: the time zone changed; the clock reads it again")
            LocalTime.rereadZone()
            apply(clock.tick(LocalTime.now()))
        }
    }

    /// Off, or away (a VT, unplugged): no minute timer runs; back, the clock is read again.
    package func screen(on: Bool) {
        apply(clock.screen(on: on, now: LocalTime.now()))
    }

    /// A message on one of `topics`.
    package func received(topic: String, payload: [UInt8], now: Double) {
        let outcome = texts.received(topic: topic, payload: payload, now: now)
        for problem in outcome.problems { log(.warning, problem) }
        armStale(now: now)
    }

    /// New settings (a reload): the texts keep what their topics last said when the topics stay.
    package func update(_ new: OverlaySettings, locale: DateStyle, now: Double) {
        if new.texts != settings.texts { texts = OverlayTexts(texts: new.texts, keeping: texts) }
        settings = new
        apply(clock.update(Self.clockSettings(new, locale: locale), now: LocalTime.now()))
        armStale(now: now)
    }

    private func apply(_ actions: [ClockMachine.Action]) {
        for action in actions {
            switch action {
            case .show(let lines): clockLines = lines
            case .hide: clockLines = []
            case .wake(let epoch):
                if let epoch { minuteTimer.arm(atEpochSeconds: epoch) } else { minuteTimer.disarm() }
            }
        }
    }

    private func armStale(now: Double) {
        if let due = texts.nextStale(now: now) { staleTimer.arm(at: due) } else { staleTimer.disarm() }
    }
}
