/// One source's syncs as the player runs them: when the next is due, the state `status`, MQTT and the web remote
/// show, and one log line for each change of state (a NAS that stays away for a week is said once, not every try).
///
/// Times are the monotonic clock's seconds.
public struct SourceMachine: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        /// No sync has ended since the player started.
        case starting
        case inSync
        case failed(SyncFailure)

        /// `in sync`, `offline`, ...: the word status and MQTT carry.
        public var name: String {
            switch self {
            case .starting: return "starting"
            case .inSync: return "in sync"
            case .failed(let failure):
                switch failure.kind {
                case .offline: return "offline"
                case .busy: return "busy"
                case .refused: return "refused"
                case .badAnswer, .local, .settings: return "error"
                }
            }
        }
    }

    /// How far the running sync is.
    public struct Progress: Equatable, Sendable {
        /// Still listing the server's folders (`total` unknown).
        public var listing = true
        public var done = 0
        public var total = 0
        public var bytes: Int64 = 0
    }

    public struct Message: Equatable, Sendable {
        public var isWarning: Bool
        public var text: String
    }

    public let name: String
    public let interval: Double
    public private(set) var state = State.starting
    /// When the state began.
    public private(set) var since: Double
    /// The sync running now, if any.
    public private(set) var running: Progress?
    public private(set) var nextSync: Double
    /// When the last sync that ended in sync ended.
    public private(set) var lastSuccess: Double?
    public private(set) var bytesFetched: Int64 = 0
    public private(set) var photosFetched = 0
    /// Failed syncs since the last good one: the backoff doubles with each.
    public private(set) var failures = 0
    public private(set) var lastTally: SyncTally?

    /// The first retry after a failure; then twice as long each time, up to the interval.
    public static let firstRetry = 30.0
    /// The longest a server's Retry-After is waited for.
    public static let longestRetryAfter = 86400.0

    /// The first sync is due at once.
    public init(name: String, interval: Double, now: Double) {
        self.name = name
        self.interval = interval
        since = now
        nextSync = now
    }

    public func isDue(now: Double) -> Bool { running == nil && now >= nextSync }

    public mutating func started(now: Double) {
        running = Progress()
    }

    /// Ask for a sync now (`ctl sync`); one running goes on.
    public mutating func syncSoon(now: Double) {
        nextSync = min(nextSync, now)
    }

    public mutating func report(_ report: SyncReport, now: Double) -> [Message] {
        switch report {
        case .listing:
            running = Progress()
            return []
        case .fetching(let done, let total, let bytes):
            running = Progress(listing: false, done: done, total: total, bytes: bytes)
            return []
        case .done(let tally):
            return succeeded(tally, now: now)
        case .failed(let failure):
            return failed(failure, now: now)
        }
    }

    /// The sync's process ended; `how` says how (`exit status 1`, `killed by signal 9`). A process that ended
    /// without its last report failed.
    public mutating func ended(now: Double, how: String) -> [Message] {
        guard running != nil else { return [] }
        return failed(SyncFailure(kind: .local, message: "the sync's process ended without a word (\(how))"), now: now)
    }

    private mutating func succeeded(_ tally: SyncTally, now: Double) -> [Message] {
        running = nil
        bytesFetched += tally.bytes
        photosFetched += tally.fetched
        lastSuccess = now
        failures = 0
        nextSync = now + interval
        var messages: [Message] = []
        let counts =
            "\(tally.fetched) fetched (\(Self.megabytes(tally.bytes))), \(tally.moved) moved, \(tally.deleted) deleted"
        switch state {
        case .inSync:
            if tally.changedCache { messages.append(Message(isWarning: false, text: "source \(name): \(counts)")) }
        case .starting:
            messages.append(
                Message(isWarning: false, text: "source \(name): in sync, \(tally.listed) photos; \(counts)"))
        case .failed(let failure):
            messages.append(
                Message(
                    isWarning: false,
                    text:
                        "source \(name): in sync again after \(Self.duration(now - since)) \(State.failed(failure).name); "
                        + counts))
        }
        if tally.notFitting != lastTally?.notFitting ?? 0, tally.notFitting > 0 {
            messages.append(
                Message(
                    isWarning: true,
                    text: "source \(name): \(tally.notFitting) older photos do not fit in its cacheLimitMiB"))
        }
        if tally.conflicts != lastTally?.conflicts ?? 0, tally.conflicts > 0 {
            messages.append(
                Message(
                    isWarning: true,
                    text: "source \(name): \(tally.conflicts) photos left alone: the library has a file of its own "
                        + "at their names (vitrine sync --once --source \(name) lists them)"))
        }
        if state != .inSync { since = now }
        state = .inSync
        lastTally = tally
        return messages
    }

    private mutating func failed(_ failure: SyncFailure, now: Double) -> [Message] {
        bytesFetched += running?.bytes ?? 0
        photosFetched += running?.done ?? 0
        running = nil
        failures += 1
        var delay: Double
        switch failure.kind {
        case .refused, .settings:
            // A wrong password or a file others can read stays so until someone changes it.
            delay = interval
        case .offline, .busy, .badAnswer, .local:
            let doublings = min(failures - 1, 20)
            delay = min(Self.firstRetry * Double(1 << doublings), interval)
        }
        if let asked = failure.retryAfter {
            delay = max(delay, min(Double(asked), Self.longestRetryAfter))
        }
        nextSync = now + delay
        let new = State.failed(failure)
        defer { state = new }
        guard new.name != state.name else { return [] }
        since = now
        let cache = lastSuccess == nil ? "nothing fetched yet" : "the show plays what was fetched"
        return [
            Message(
                isWarning: true,
                text: "source \(name): \(new.name): \(failure.message); \(cache); trying again in "
                    + Self.duration(delay))
        ]
    }

    /// `syncing 3 of 200`, `in sync`, `offline for 5 min: ...`: for the screen's notice and the web remote.
    public func summary(now: Double) -> String {
        if let running {
            return running.listing ? "listing the server's folders" : "fetching \(running.done) of \(running.total)"
        }
        switch state {
        case .starting: return "starting"
        case .inSync: return "in sync"
        case .failed(let failure):
            return "\(state.name) for \(Self.duration(now - since)): \(failure.message)"
        }
    }

    static func megabytes(_ bytes: Int64) -> String {
        let tenths = (Double(bytes) / 100_000).rounded()
        return "\(ConfigObject.format(tenths / 10)) MB"
    }

    /// `45 s`, `3 min`, `2 h`, `4 days`.
    public static func duration(_ seconds: Double) -> String {
        let whole = max(Int(seconds.rounded()), 0)
        if whole < 120 { return "\(whole) s" }
        if whole < 7200 { return "\(whole / 60) min" }
        if whole < 172_800 { return "\(whole / 3600) h" }
        return "\(whole / 86400) days"
    }
}
