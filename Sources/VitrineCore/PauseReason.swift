/// Why the slide timer is held. Each is tracked on its own; the timer runs only when none is set.
public enum PauseReason: String, Sendable, CaseIterable, Comparable {
    /// The user paused (control socket, key, tap).
    case user
    /// A touch or key was just used; the show waits `pauseOnInput` seconds.
    case inputHold
    /// The system is suspending.
    case suspend
    /// The virtual terminal was switched away.
    case vtAway
    /// The screen was turned off (schedule or command).
    case screenOff
    /// Nobody has been in the room for the presence timeout (motion sensor and input): the screen is off.
    case absent
    /// The screen's connector is unplugged (or a TV dropped hotplug in standby). Its own reason, so a replug never
    /// ends what the schedule holds, nor the schedule's morning what an unplug holds.
    case unplugged
    /// The TV was switched off by its owner (HDMI-CEC said so); the player turns it on again only at the next
    /// schedule or presence change.
    case tvOff
    /// The TV shows another device (HDMI-CEC Active Source, Set Stream Path or Routing Change).
    case otherSource
    /// The slide to show next is still being decoded.
    case loading
    /// A clip is on screen: the show moves on when it ends, not after the interval.
    case playing

    /// The reasons that hold a clip where it is (its picture stays, its sound stops); the others (a hold after
    /// input, the next slide loading, the clip itself) let it play.
    public var holdsClip: Bool {
        switch self {
        case .user, .suspend, .vtAway, .screenOff, .absent, .unplugged, .tvOff, .otherSource: true
        case .inputHold, .loading, .playing: false
        }
    }

    public static func < (lhs: PauseReason, rhs: PauseReason) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}
