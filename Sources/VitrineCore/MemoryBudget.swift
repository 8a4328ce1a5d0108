import Synchronization

/// The byte budget every decoded frame and decode buffer is charged to before it is allocated, so a small board
/// refuses a photo with a clear message instead of being killed by the kernel's OOM killer.
public final class MemoryBudget: Sendable {
    public struct Exceeded: Error, Equatable, Sendable, CustomStringConvertible {
        public var purpose: String
        public var requested: Int
        public var available: Int
        public var limit: Int

        public var description: String {
            "\(purpose) needs \(MemoryBudget.format(requested)), but only \(MemoryBudget.format(available)) of the "
                + "\(MemoryBudget.format(limit)) memory budget is free"
        }
    }

    /// A charge against the budget; dropping it returns the bytes. Exactly one owner, so a charge cannot be
    /// returned twice.
    public struct Charge: ~Copyable, Sendable {
        let budget: MemoryBudget
        public let bytes: Int

        deinit { budget.release(bytes) }
    }

    public let limit: Int
    // Atomics, not a Mutex: Core has no pthreads, and Synchronization's Mutex hands a contended lock over inside
    // the kernel, where ThreadSanitizer cannot see it (two screens' decode workers charging one board's budget made
    // `make test-tsan` report races that were none). A compare-and-swap is an instruction TSan instruments.
    private let usedBytes = Atomic<Int>(0)
    private let peakBytes = Atomic<Int>(0)
    /// The board's budget this one is a share of (one screen's of several): a charge is taken from both.
    public let parent: MemoryBudget?

    public init(limit: Int, parent: MemoryBudget? = nil) {
        self.limit = limit
        self.parent = parent
    }

    /// Each screen's share of this budget, from the least each needs and its size: each gets its `minimum` and
    /// the rest is split in proportion to `pixels`. A share never takes from another, so a 4K screen's decode
    /// cannot leave a small screen's next slide without memory. Nil when the minimums do not fit.
    public func shares(minimum: [Int], pixels: [Int]) -> [MemoryBudget]? {
        let needed = minimum.reduce(0, +)
        guard needed <= limit, minimum.count == pixels.count else { return nil }
        let spare = limit - needed
        let total = max(pixels.reduce(0, +), 1)
        return zip(minimum, pixels).map { least, size in
            MemoryBudget(limit: least + Int(Double(spare) * Double(size) / Double(total)), parent: self)
        }
    }

    public var used: Int { usedBytes.load(ordering: .acquiring) }
    public var peak: Int { peakBytes.load(ordering: .acquiring) }

    public func charge(_ bytes: Int, for purpose: String) throws(Exceeded) -> Charge {
        if let refusing = take(bytes) {
            throw Exceeded(
                purpose: purpose, requested: bytes, available: max(0, refusing.limit - refusing.used),
                limit: refusing.limit)
        }
        return Charge(budget: self, bytes: bytes)
    }

    /// Takes the bytes here and from the parent, all or nothing; returns the budget that refused them.
    private func take(_ bytes: Int) -> MemoryBudget? {
        guard bytes >= 0 else { return self }
        var current = usedBytes.load(ordering: .acquiring)
        while true {
            guard bytes <= limit - current else { return self }
            let (exchanged, seen) = usedBytes.compareExchange(
                expected: current, desired: current + bytes, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = seen
        }
        peakBytes.max(current + bytes, ordering: .acquiringAndReleasing)
        guard let refusing = parent?.take(bytes) else { return nil }
        usedBytes.subtract(bytes, ordering: .acquiringAndReleasing)
        return refusing
    }

    fileprivate func release(_ bytes: Int) {
        usedBytes.subtract(bytes, ordering: .acquiringAndReleasing)
        parent?.release(bytes)
    }

    /// Mebibytes with one decimal, so a shortfall never reads as "needs 96, only 96 free".
    public static func format(_ bytes: Int) -> String {
        let tenths = bytes > 0 ? max(1, Int((Double(bytes) / 104_857.6).rounded())) : 0
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
