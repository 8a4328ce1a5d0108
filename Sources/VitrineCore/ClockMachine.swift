/// The clock and date over the picture, kept right by the wall clock rather than the slide: it wants a redraw at
/// the start of every local minute (a timer at that epoch second), whatever the interval and while paused, and again
/// at once whenever the runtime sees the clock stepped, the system resumed or the time zone changed (the timer
/// comes back early then, and `tick` simply reads the time again). Nothing is drawn while the screen is off. A
/// struct whose methods return actions; the runtime carries them out (a strip redrawn, a timer armed).
public struct ClockMachine: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Nil: no clock.
        public var clock: ClockFormat?
        /// Nil: no date; on or off independently of the clock.
        public var date: DateStyle?

        public init(clock: ClockFormat? = nil, date: DateStyle? = nil) {
            self.clock = clock
            self.date = date
        }

        public var isEmpty: Bool { clock == nil && date == nil }
    }

    public enum Action: Sendable, Equatable {
        /// Draw these lines (clock first, then the date) in place of what was there.
        case show([String])
        /// Take the overlay off the picture.
        case hide
        /// Call `tick` at this epoch second (the next minute), or never.
        case wake(atEpoch: Int?)
    }

    public private(set) var settings: Settings
    public private(set) var shown: [String]?
    private var screenOn = true

    public init(settings: Settings) {
        self.settings = settings
    }

    /// The lines for `time`.
    public func lines(at time: LocalTime) -> [String] {
        var lines: [String] = []
        if let clock = settings.clock { lines.append(clock.format(time)) }
        if let date = settings.date, let text = date.format(exifDate: time.exifForm) { lines.append(text) }
        return lines
    }

    /// At start, when the minute timer fires, and when the clock, the zone or a resume moved the time.
    public mutating func tick(_ now: LocalTime) -> [Action] {
        guard !settings.isEmpty, screenOn else { return [.wake(atEpoch: nil)] }
        let wanted = lines(at: now)
        var actions: [Action] = []
        if wanted != shown {
            shown = wanted
            actions.append(.show(wanted))
        }
        actions.append(.wake(atEpoch: now.nextMinute))
        return actions
    }

    /// Off: the overlay goes with the picture and no timer runs; on: drawn for now again.
    public mutating func screen(on: Bool, now: LocalTime) -> [Action] {
        screenOn = on
        guard on else {
            let hadText = shown != nil
            shown = nil
            return (hadText ? [.hide] : []) + [.wake(atEpoch: nil)]
        }
        return tick(now)
    }

    /// A new picture arrived without the overlay on it: it is drawn over it again.
    public mutating func pictureReplaced(now: LocalTime) -> [Action] {
        shown = nil
        return tick(now)
    }

    public mutating func update(_ new: Settings, now: LocalTime) -> [Action] {
        settings = new
        if new.isEmpty {
            let hadText = shown != nil
            shown = nil
            return (hadText ? [.hide] : []) + [.wake(atEpoch: nil)]
        }
        return tick(now)
    }
}
