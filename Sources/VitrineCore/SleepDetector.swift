/// Notices that the system slept, however it shows: CLOCK_BOOTTIME jumping ahead of CLOCK_MONOTONIC (S3), the
/// suspend counter growing (s2idle too, during which the two clocks move together), or a sign the runtime sees
/// itself (a slide deadline firing late, the wall-clock timer the kernel cancels on resume). One sleep can show up
/// several ways, and the suspend counter only moves once user space runs again: signs within `settling` seconds
/// of a wake count as that wake. Fed the clocks' readings, so tests drive it with numbers.
public struct SleepDetector: Sendable {
    /// A slide timer this late means the system slept through the deadline.
    public static let lateExpiry = 1.5
    public static let settling = 10.0

    /// CLOCK_BOOTTIME minus CLOCK_MONOTONIC, as last seen.
    private var offset: Double
    /// `/sys/power/suspend_stats/success`, as last seen.
    private var suspendCount: Int
    /// When the last wake was noticed (CLOCK_MONOTONIC).
    private var lastWake = -Double.infinity

    public init(offset: Double, suspendCount: Int) {
        self.offset = offset
        self.suspendCount = suspendCount
    }

    /// The clocks as they read now (before anything that woke the loop is handled, so a deadline that passed in
    /// the sleep does not advance the show): why the system is taken to have slept, or nil.
    public mutating func check(offset newOffset: Double, suspendCount newCount: Int, now: Double) -> String? {
        defer {
            offset = newOffset
            suspendCount = newCount
        }
        let jumped = newOffset - offset > 1
        guard jumped || newCount > suspendCount else { return nil }
        let reason = jumped ? "the system slept for \(Int(newOffset - offset)) s" : "the system slept (s2idle)"
        return wake(offset: newOffset, suspendCount: newCount, now: now) ? reason : nil
    }

    /// Another sign of a sleep: true when it is a new wake, false when it is one more sign of the last.
    public mutating func wake(offset newOffset: Double, suspendCount newCount: Int, now: Double) -> Bool {
        offset = newOffset
        suspendCount = newCount
        guard now - lastWake > Self.settling else { return false }
        lastWake = now
        return true
    }

    /// Whether a slide deadline that fires at `now` came so late that the system must have slept through it.
    public static func firedLate(deadline: Double, now: Double) -> Bool { now - deadline > lateExpiry }
}
