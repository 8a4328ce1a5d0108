/// One push button on a GPIO line: its edges debounced, then a press, or a long press when the button has a
/// second action. It owns no timer: it asks for one (`arm`) and is told when it fires, so tests drive it with a
/// manual clock and the edges' kernel timestamps.
///
/// Debounce waits for the level to hold still: an edge only starts a settle time, and the level the line has when
/// that time is up is the one taken. A contact that bounces (a few edges within a millisecond or two, on press
/// and on release) gives one press, and the press is never lost to the bounces, as a scheme that ignores edges
/// after the first could lose the release.
public struct ButtonMachine: Sendable {
    public struct Binding: Sendable, Equatable {
        public var action: KeyMap.Action
        /// The action of a press held `longPressSeconds`; nil: the button has one action, sent on press.
        public var longAction: KeyMap.Action?

        public init(action: KeyMap.Action, longAction: KeyMap.Action? = nil) {
            self.action = action
            self.longAction = longAction
        }
    }

    public enum Event: Sendable, Equatable {
        /// The line changed to `pressed` (active level, after active-low) at this monotonic time.
        case edge(pressed: Bool, at: Double)
        /// The timer this machine armed fired.
        case deadline(now: Double)
    }

    public enum Action: Sendable, Equatable, CustomStringConvertible {
        case press(KeyMap.Action)
        case longPress(KeyMap.Action)
        /// Fire `deadline` at this monotonic time (replacing any earlier arm), or never (nil).
        case arm(Double?)

        public var description: String {
            switch self {
            case .press(let action): return "press \(action.rawValue)"
            case .longPress(let action): return "long press \(action.rawValue)"
            case .arm(let deadline): return deadline.map { "arm \(ConfigObject.format($0))" } ?? "disarm"
            }
        }
    }

    public let binding: Binding
    public let debounceSeconds: Double
    public let longPressSeconds: Double
    /// The debounced level.
    public private(set) var pressed = false
    /// The raw level and when it last changed, while it settles.
    private var raw = false
    private var settlesAt: Double?
    /// When the debounced press of a button with a long action began, until its long press fired or it was
    /// released.
    private var pressedSince: Double?
    private var armed: Double?

    public init(binding: Binding, debounceSeconds: Double, longPressSeconds: Double) {
        self.binding = binding
        self.debounceSeconds = debounceSeconds
        self.longPressSeconds = longPressSeconds
    }

    /// The next moment something is due: a level settling, or a held press becoming long.
    public var deadline: Double? {
        [settlesAt, pressedSince.map { $0 + longPressSeconds }].compactMap { $0 }.min()
    }

    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .edge(let level, let time):
            raw = level
            if debounceSeconds <= 0 {
                actions += settle(at: time)
            } else {
                settlesAt = time + debounceSeconds
            }
        case .deadline(let now):
            if let due = settlesAt, now >= due {
                settlesAt = nil
                actions += settle(at: due)
            }
            if let since = pressedSince, let long = binding.longAction, now >= since + longPressSeconds {
                pressedSince = nil
                actions.append(.longPress(long))
            }
            if actions.isEmpty { armed = nil }
        }
        if deadline != armed {
            armed = deadline
            actions.append(.arm(deadline))
        }
        return actions
    }

    /// The raw level has held still: take it.
    private mutating func settle(at time: Double) -> [Action] {
        guard raw != pressed else { return [] }
        pressed = raw
        if pressed {
            if binding.longAction == nil { return [.press(binding.action)] }
            pressedSince = time
            return []
        }
        // Released: a short press when the long press has not fired yet.
        guard pressedSince != nil else { return [] }
        pressedSince = nil
        return [.press(binding.action)]
    }
}
