/// Whether anyone is there to see the screen, from a motion sensor's line and from any input (a key, a touch, a
/// button, a control command). Nobody for `offAfter` seconds makes the room absent; motion or input makes it
/// present again at once. It owns no timer: it asks for one (`arm`) and is told when it fires (`deadline`), so
/// tests drive it with a manual clock.
///
/// A PIR sensor (HC-SR501, AM312) holds its output active while it keeps seeing motion and for a few seconds
/// after: the countdown starts when the line goes idle, not at its last edge, so a person sitting still in front
/// of a sensor that keeps retriggering is never timed out.
public struct PresenceMachine: Sendable {
    public enum Event: Sendable, Equatable {
        /// The player started; `motion` is the sensor line's level then (false without a sensor).
        case start(motion: Bool, now: Double)
        /// The sensor line became active (motion) or idle.
        case motion(Bool, now: Double)
        /// A key, touch, button or control command.
        case activity(now: Double)
        /// The timer this machine armed fired.
        case deadline(now: Double)
    }

    public enum Action: Sendable, Equatable, CustomStringConvertible {
        /// Somebody came back: the screen may come on.
        case present(why: String)
        /// Nobody for `offAfter`: the screen goes off.
        case absent(why: String)
        /// Fire `deadline` at this monotonic time (replacing any earlier arm), or never (nil).
        case arm(Double?)

        public var description: String {
            switch self {
            case .present(let why): return "present (\(why))"
            case .absent(let why): return "absent (\(why))"
            case .arm(let deadline): return deadline.map { "arm \(ConfigObject.format($0))" } ?? "disarm"
            }
        }
    }

    /// Seconds without motion or input before the room counts as empty.
    public let offAfter: Double
    public private(set) var isPresent = true
    /// The sensor line is active now.
    public private(set) var motion = false
    /// When the last motion ended or the last input came.
    public private(set) var lastSeen = 0.0
    private var armed: Double?

    public init(offAfter: Double) {
        self.offAfter = offAfter
    }

    /// When the room becomes absent unless something is seen first; nil while the sensor sees motion or the room
    /// is already absent.
    public var deadline: Double? { isPresent && !motion ? lastSeen + offAfter : nil }

    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .start(let active, let now):
            motion = active
            lastSeen = now
            isPresent = true
        case .motion(let active, let now):
            guard active != motion else { break }
            motion = active
            lastSeen = now
            if active && !isPresent {
                isPresent = true
                actions.append(.present(why: "motion"))
            }
        case .activity(let now):
            lastSeen = max(lastSeen, now)
            if !isPresent {
                isPresent = true
                actions.append(.present(why: "input"))
            }
        case .deadline(let now):
            if let due = deadline, now >= due {
                isPresent = false
                actions.append(.absent(why: "no motion or input for \(ConfigObject.format(offAfter / 60)) min"))
            } else {
                // Fired early or for an old deadline: the timer is spent, so it is armed again.
                armed = nil
            }
        }
        if deadline != armed {
            armed = deadline
            actions.append(.arm(deadline))
        }
        return actions
    }
}
