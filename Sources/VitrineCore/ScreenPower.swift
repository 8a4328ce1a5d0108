/// Whether the screen should be lit, from the two things that decide it: the schedule (or a `screen` command),
/// and whether anyone is in the room. The schedule wins at night unless `wakeOutsideSchedule`: then someone
/// moving or touching wakes the screen until the room is empty again.
public struct ScreenPower: Sendable, Equatable {
    public var wakeOutsideSchedule: Bool
    /// The schedule or a `screen off` command holds the screen off.
    public private(set) var commandedOff = false
    /// Nobody has been seen for the presence timeout.
    public private(set) var absent = false
    /// Someone woke the screen while the schedule holds it off (`wakeOutsideSchedule` only).
    public private(set) var woken = false

    public init(wakeOutsideSchedule: Bool = false) {
        self.wakeOutsideSchedule = wakeOutsideSchedule
    }

    public var isOn: Bool { !absent && (!commandedOff || woken) }

    /// The pause reasons the slide timer holds for the screen: `screenOff` while the schedule keeps it dark,
    /// `absent` while the room is empty. Each is its own, so the morning never ends what the empty room holds.
    public var heldReasons: Set<PauseReason> {
        var reasons: Set<PauseReason> = []
        if absent { reasons.insert(.absent) }
        if commandedOff && !woken { reasons.insert(.screenOff) }
        return reasons
    }

    /// The schedule or a command asks for the screen on or off; false when it already was. A change of the
    /// schedule ends a wake: at the evening's off the screen goes dark even with someone in the room.
    public mutating func command(on: Bool) -> Bool {
        guard commandedOff == on else { return false }
        commandedOff = !on
        woken = false
        return true
    }

    /// The room became empty, or someone came back.
    public mutating func presence(_ present: Bool) {
        absent = !present
        if present { seen() } else { woken = false }
    }

    /// Someone moved or used an input.
    public mutating func seen() {
        if commandedOff && wakeOutsideSchedule && !absent { woken = true }
    }
}
