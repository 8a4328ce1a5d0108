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
    private let state = Mutex<(used: Int, peak: Int)>((0, 0))

    public init(limit: Int) {
        self.limit = limit
    }

    public var used: Int { state.withLock { $0.used } }
    public var peak: Int { state.withLock { $0.peak } }

    public func charge(_ bytes: Int, for purpose: String) throws(Exceeded) -> Charge {
        let granted = state.withLock { state -> Bool in
            guard bytes >= 0, bytes <= limit - state.used else { return false }
            state.used += bytes
            state.peak = max(state.peak, state.used)
            return true
        }
        guard granted else {
            throw Exceeded(purpose: purpose, requested: bytes, available: max(0, limit - used), limit: limit)
        }
        return Charge(budget: self, bytes: bytes)
    }

    fileprivate func release(_ bytes: Int) {
        state.withLock { $0.used -= bytes }
    }

    /// Mebibytes with one decimal, so a shortfall never reads as "needs 96, only 96 free".
    public static func format(_ bytes: Int) -> String {
        let tenths = bytes > 0 ? max(1, Int((Double(bytes) / 104_857.6).rounded())) : 0
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
