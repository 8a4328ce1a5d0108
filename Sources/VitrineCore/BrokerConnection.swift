/// The link to the MQTT broker as a state machine: connect, and after a failure or a lost connection wait with
/// capped exponential backoff and jitter (so a fleet does not reconnect in lockstep when the broker comes back)
/// before the next try. It logs once per change of state or reason, never once per retry.
public struct BrokerConnection: Sendable {
    public enum State: Equatable, Sendable {
        case idle
        case connecting
        case connected
        case waiting(until: Double)
    }

    public enum Action: Equatable, Sendable {
        /// Start a connection attempt (non-blocking); its outcome comes back as `connected` or `failed`.
        case connect
        /// Wake the machine at this time (`timerFired`).
        case arm(at: Double)
        /// Now connected: subscribe, say `online`, publish discovery and state.
        case announce
        case log(String)
        case warn(String)
    }

    public static let firstDelay = 1.0
    public static let maximumDelay = 60.0
    /// Each wait is the backoff times a random factor within this much of 1.
    public static let jitter = 0.2

    public let broker: String
    public private(set) var state = State.idle
    /// Connections made after the first (a broker restart, a network drop).
    public private(set) var reconnects = 0
    /// Attempts that failed since the last connection.
    public private(set) var failedAttempts = 0
    private var everConnected = false
    private var delay = firstDelay
    private var lastReason: String?
    private var random: SeededGenerator

    public init(broker: String, seed: UInt64) {
        self.broker = broker
        random = SeededGenerator(seed: seed)
    }

    public var isConnected: Bool { state == .connected }

    public mutating func start() -> [Action] {
        guard state == .idle else { return [] }
        state = .connecting
        return [.connect]
    }

    public mutating func connected() -> [Action] {
        guard state == .connecting else { return [] }
        state = .connected
        var line = "MQTT: connected to \(broker)"
        if everConnected {
            reconnects += 1
            line = "MQTT: connected again to \(broker)"
        }
        if failedAttempts > 0 { line += " after \(failedAttempts) failed attempt\(failedAttempts == 1 ? "" : "s")" }
        everConnected = true
        failedAttempts = 0
        delay = Self.firstDelay
        lastReason = nil
        return [.log(line), .announce]
    }

    /// An attempt failed or the connection was lost: wait, then try again.
    public mutating func failed(_ reason: String, now: Double) -> [Action] {
        let wasConnected: Bool
        switch state {
        case .connecting: wasConnected = false
        case .connected: wasConnected = true
        case .idle, .waiting: return []
        }
        let wait = delay * (1 + Self.jitter * (2 * Double(random.next() >> 11) / Double(1 << 53) - 1))
        delay = min(delay * 2, Self.maximumDelay)
        state = .waiting(until: now + wait)
        var actions: [Action] = []
        if wasConnected {
            actions.append(.warn("MQTT: lost \(broker) (\(reason)); reconnecting, the show goes on"))
        } else {
            failedAttempts += 1
            if reason != lastReason {
                actions.append(
                    .warn(
                        "MQTT: cannot connect to \(broker): \(reason); retrying with backoff up to "
                            + "\(Int(Self.maximumDelay)) s, the show goes on"))
            }
        }
        lastReason = reason
        actions.append(.arm(at: now + wait))
        return actions
    }

    public mutating func timerFired(now: Double) -> [Action] {
        guard case .waiting(let until) = state, now >= until - 0.001 else { return [] }
        state = .connecting
        return [.connect]
    }
}
