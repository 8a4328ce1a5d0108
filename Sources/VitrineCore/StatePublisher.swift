/// Publishes the player's state on change but at most once per `spacing`: a burst of changes (a category switch, a
/// run of `next`) becomes one message now and one with the newest state when the spacing has passed; the newest
/// state is never lost.
public struct StatePublisher: Sendable {
    public enum Decision: Equatable, Sendable {
        case publish(String)
        /// Held back: call `timerFired` at this time.
        case wait(until: Double)
        case nothing
    }

    public static let spacing = 0.25

    private var lastSent: String?
    private var lastTime = -Double.infinity
    private var pending: String?

    public init() {}

    /// The state as it is now.
    public mutating func offer(_ state: String, now: Double) -> Decision {
        if pending != nil {
            pending = state == lastSent ? nil : state
            return .nothing
        }
        guard state != lastSent else { return .nothing }
        guard now - lastTime >= Self.spacing else {
            pending = state
            return .wait(until: lastTime + Self.spacing)
        }
        lastSent = state
        lastTime = now
        return .publish(state)
    }

    public mutating func timerFired(now: Double) -> String? {
        guard let state = pending, now >= lastTime + Self.spacing - 0.001 else { return nil }
        pending = nil
        lastSent = state
        lastTime = now
        return state
    }

    /// A state published outside `offer` (on connecting, or when Home Assistant comes online): the spacing counts
    /// from it.
    public mutating func sent(_ state: String, now: Double) {
        pending = nil
        lastSent = state
        lastTime = now
    }

    /// A new connection: the next offer is published whatever was sent before (a broker that restarted without
    /// persistence lost the retained state).
    public mutating func reset() {
        lastSent = nil
        pending = nil
        lastTime = -Double.infinity
    }
}
