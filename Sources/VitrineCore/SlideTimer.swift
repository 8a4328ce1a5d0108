/// The one slide deadline, as a value: methods return what to do with the real timer, so tests drive it with a
/// manual clock. Times are CLOCK_MONOTONIC seconds.
///
/// A pause stores the time left; every arm gets a new generation, and an expiration is honoured only for the
/// current generation while running, so a late or stale expiration can never advance the show twice.
public struct SlideTimer: Sendable, Equatable {
    public enum Command: Equatable, Sendable {
        case arm(deadline: Double, generation: Int)
        case disarm
    }

    public private(set) var interval: Double
    public private(set) var generation = 0
    /// Set while running.
    public private(set) var deadline: Double?
    /// The time the current slide has left while paused (or not yet started).
    public private(set) var remaining: Double
    public private(set) var reasons: Set<PauseReason>
    /// True after an expiration, until the next slide starts its interval.
    public private(set) var expired = false

    public init(interval: Double, reasons: Set<PauseReason> = [.loading]) {
        self.interval = interval
        remaining = interval
        self.reasons = reasons
    }

    public var isRunning: Bool { deadline != nil }

    public func secondsLeft(now: Double) -> Double {
        if expired { return 0 }
        return deadline.map { max(0, $0 - now) } ?? remaining
    }

    private mutating func armIfFree(now: Double) -> Command? {
        guard reasons.isEmpty, !expired else { return nil }
        generation += 1
        let due = now + remaining
        deadline = due
        return .arm(deadline: due, generation: generation)
    }

    /// A new slide is on screen: loading is over and it gets the full interval (counting only while nothing else
    /// holds the timer).
    /// `transition` is added to this slide's interval: the seconds its crossfade takes, after which it counts.
    public mutating func restart(now: Double, transition: Double = 0) -> Command {
        reasons.remove(.loading)
        expired = false
        remaining = interval + transition
        let wasRunning = deadline != nil
        deadline = nil
        if let command = armIfFree(now: now) { return command }
        if wasRunning { generation += 1 }
        return .disarm
    }

    public mutating func pause(_ reason: PauseReason, now: Double) -> Command? {
        let (inserted, _) = reasons.insert(reason)
        guard inserted, let deadline else { return nil }
        remaining = max(0, deadline - now)
        self.deadline = nil
        generation += 1
        return .disarm
    }

    public mutating func resume(_ reason: PauseReason, now: Double) -> Command? {
        guard reasons.remove(reason) != nil else { return nil }
        return armIfFree(now: now)
    }

    /// The system slept: the slide on screen gets a full interval again, with no catch-up advance.
    public mutating func resumedFromSleep(now: Double) -> Command? {
        guard !expired else { return nil }
        remaining = interval
        if deadline != nil {
            deadline = nil
            return armIfFree(now: now)
        }
        return nil
    }

    /// The slide is done early (a clip reached its end): `reason` no longer holds the timer, and the deadline is
    /// now, so the show moves on as soon as nothing else holds it.
    public mutating func finishEarly(_ reason: PauseReason, now: Double) -> Command? {
        reasons.remove(reason)
        expired = false
        remaining = 0
        deadline = nil
        return armIfFree(now: now)
    }

    /// `reason` no longer holds the timer, which is not armed for it (the next `restart` arms it).
    public mutating func clear(_ reason: PauseReason) { reasons.remove(reason) }

    /// A new interval, from the next slide on (the slide on screen keeps the time it was given).
    public mutating func changeInterval(to seconds: Double) {
        interval = seconds
    }

    /// The real timer fired. True when this is the current deadline: the show should advance.
    public mutating func expire(generation fired: Int, now: Double) -> Bool {
        guard fired == generation, let deadline, now >= deadline - 0.001 else { return false }
        self.deadline = nil
        remaining = 0
        expired = true
        return true
    }
}
