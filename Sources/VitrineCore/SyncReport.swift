/// What a sync's process tells the player, one JSON line at a time on its standard output
/// (`vitrine sync --once --report`): how far it is, then how it ended.
public enum SyncReport: Equatable, Sendable {
    case listing(folders: Int)
    case fetching(done: Int, total: Int, bytes: Int64)
    case done(SyncTally)
    case failed(SyncFailure)

    public var line: String {
        switch self {
        case .listing(let folders):
            return "{\"event\":\"listing\",\"folders\":\(folders)}"
        case .fetching(let done, let total, let bytes):
            return "{\"event\":\"fetching\",\"done\":\(done),\"total\":\(total),\"bytes\":\(bytes)}"
        case .done(let tally):
            return
                "{\"event\":\"done\",\"listed\":\(tally.listed),\"fetched\":\(tally.fetched),\"moved\":\(tally.moved),"
                + "\"deleted\":\(tally.deleted),\"kept\":\(tally.kept),\"bytes\":\(tally.bytes),"
                + "\"notFitting\":\(tally.notFitting),\"conflicts\":\(tally.conflicts),\"skipped\":\(tally.skipped)}"
        case .failed(let failure):
            return "{\"event\":\"failed\",\"kind\":\"\(failure.kind.rawValue)\","
                + "\"retryAfter\":\(failure.retryAfter.map { String($0) } ?? "null"),"
                + "\"message\":\(JSONText.quote(failure.message))}"
        }
    }

    /// nil for a line that is not a report (the player then ignores it).
    public static func parse(_ line: String) -> SyncReport? {
        guard let value = try? JSONParser.parse(line), case .object(let members) = value.kind else { return nil }
        func field(_ key: String) -> JSONValue.Kind? { members.first { $0.key == key }?.value.kind }
        func integer(_ key: String) -> Int64? {
            guard case .number(let number)? = field(key), number >= 0, number < 9e15, number.rounded() == number
            else { return nil }
            return Int64(number)
        }
        guard case .string(let event)? = field("event") else { return nil }
        switch event {
        case "listing":
            return integer("folders").map { .listing(folders: Int($0)) }
        case "fetching":
            guard let done = integer("done"), let total = integer("total"), let bytes = integer("bytes") else {
                return nil
            }
            return .fetching(done: Int(done), total: Int(total), bytes: bytes)
        case "done":
            let keys = ["listed", "fetched", "moved", "deleted", "kept", "notFitting", "conflicts", "skipped"]
            let numbers = keys.compactMap { integer($0).map(Int.init) }
            guard numbers.count == keys.count, let bytes = integer("bytes") else { return nil }
            return .done(
                SyncTally(
                    listed: numbers[0], fetched: numbers[1], moved: numbers[2], deleted: numbers[3], kept: numbers[4],
                    bytes: bytes, notFitting: numbers[5], conflicts: numbers[6], skipped: numbers[7]))
        case "failed":
            guard case .string(let kindName)? = field("kind"), let kind = SyncFailure.Kind(rawValue: kindName),
                case .string(let message)? = field("message")
            else { return nil }
            return .failed(SyncFailure(kind: kind, message: message, retryAfter: integer("retryAfter")))
        default:
            return nil
        }
    }
}

/// What one sync did.
public struct SyncTally: Equatable, Sendable {
    public var listed = 0
    public var fetched = 0
    public var moved = 0
    public var deleted = 0
    public var kept = 0
    public var bytes: Int64 = 0
    public var notFitting = 0
    public var conflicts = 0
    public var skipped = 0

    public init(
        listed: Int = 0, fetched: Int = 0, moved: Int = 0, deleted: Int = 0, kept: Int = 0, bytes: Int64 = 0,
        notFitting: Int = 0, conflicts: Int = 0, skipped: Int = 0
    ) {
        self.listed = listed
        self.fetched = fetched
        self.moved = moved
        self.deleted = deleted
        self.kept = kept
        self.bytes = bytes
        self.notFitting = notFitting
        self.conflicts = conflicts
        self.skipped = skipped
    }

    /// Whether the cache changed.
    public var changedCache: Bool { fetched + moved + deleted > 0 }
}

/// Why a sync stopped.
public struct SyncFailure: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// No answer, a stalled link.
        case offline
        /// 503 or 429.
        case busy
        /// The login refused.
        case refused
        /// An answer that cannot be used.
        case badAnswer = "bad-answer"
        /// The cache's disk, or the sync's own process.
        case local
        /// Settings that cannot work (a credentials file others can read, a CA that cannot be read).
        case settings
    }

    public var kind: Kind
    public var message: String
    /// Seconds the server asked to wait (Retry-After).
    public var retryAfter: Int64?

    public init(kind: Kind, message: String, retryAfter: Int64? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
    }
}
