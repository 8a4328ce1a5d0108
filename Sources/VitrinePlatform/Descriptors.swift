import CLinux
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A timerfd, armed at absolute times on its clock: what both timers share.
private struct TimerFile: ~Copyable {
    let owned: Descriptor

    init(_ clock: Int32, _ operation: String) throws(RuntimeError) {
        owned = try SystemCall.open(operation) { timerfd_create(clock, Int32(TFD_NONBLOCK | TFD_CLOEXEC)) }
    }

    /// timerfd_settime fails only for a descriptor that is not a timer or a value out of range (EINVAL), which
    /// the whole seconds and nanoseconds the timers give never are; a zero value (disarm) is always valid.
    func set(seconds: Int, nanoseconds: Int = 0, flags: Int32) {
        var spec = itimerspec()
        spec.it_value.tv_sec = seconds
        spec.it_value.tv_nsec = nanoseconds
        // See above: EINVAL cannot happen for these values.
        _ = timerfd_settime(owned.number, flags, &spec, nil)
    }

    func disarm() { set(seconds: 0, flags: 0) }
}

/// A timerfd on CLOCK_MONOTONIC armed at absolute times, so a deadline does not drift when the loop is late.
public final class MonotonicTimer {
    private let file: TimerFile
    public var descriptor: Int32 { file.owned.number }

    public init() throws(RuntimeError) {
        file = try TimerFile(CLOCK_MONOTONIC, "create a timer")
    }

    /// Fires once at `seconds` (CLOCK_MONOTONIC); a time already past fires at once.
    public func arm(at seconds: Double) {
        let when = max(seconds, 0.000_001)
        file.set(
            seconds: Int(when), nanoseconds: Int((when - Double(Int(when))) * 1e9), flags: Int32(TFD_TIMER_ABSTIME))
    }

    public func disarm() { file.disarm() }

    /// Reads the expiration count so the descriptor stops being readable; true when the timer had fired.
    @discardableResult
    public func acknowledge() -> Bool {
        var count: UInt64 = 0
        return read(descriptor, &count, 8) == 8 && count > 0
    }
}

/// A timerfd on CLOCK_REALTIME for wall-clock schedules. It is cancelled (and reads fail with ECANCELED) when
/// the clock is set, so a changed time or time zone is noticed at once (timerfd_create(2), TFD_TIMER_CANCEL_ON_SET).
public final class WallClockTimer {
    private let file: TimerFile
    public var descriptor: Int32 { file.owned.number }

    public init() throws(RuntimeError) {
        file = try TimerFile(CLOCK_REALTIME, "create a wall-clock timer")
    }

    /// Fires at `seconds` since the epoch, or when the clock is set.
    public func arm(atEpochSeconds seconds: Int) {
        // TFD_TIMER_CANCEL_ON_SET is (1 << 1) in <sys/timerfd.h>, a macro built from an enum Swift does not see.
        file.set(seconds: seconds, flags: Int32(TFD_TIMER_ABSTIME) | (1 << 1))
    }

    public func disarm() { file.disarm() }

    /// Reads the expiration; true when the timer was cancelled because the clock jumped (it was set, or the
    /// system resumed from sleep), false when it simply fired.
    @discardableResult
    public func acknowledge() -> Bool {
        var count: UInt64 = 0
        return read(descriptor, &count, 8) < 0 && errno == ECANCELED
    }

    /// Local time now: seconds since the epoch and minutes since local midnight.
    public static func now() -> (epoch: Int, minuteOfDay: Int, secondOfMinute: Int) {
        var clock = time(nil)
        var local = tm()
        localtime_r(&clock, &local)
        return (clock, Int(local.tm_hour) * 60 + Int(local.tm_min), Int(local.tm_sec))
    }
}

/// An eventfd another thread writes to wake the player thread.
public final class Wakeup: Sendable {
    private let owned: Descriptor
    public var descriptor: Int32 { owned.number }

    public init() throws(RuntimeError) {
        owned = try SystemCall.open("create an eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    public func signal() {
        var one: UInt64 = 1
        // Fails only when the counter would overflow (EAGAIN at 2^64 - 2 unread signals): the loop is awake then.
        _ = write(descriptor, &one, 8)
    }

    public func drain() {
        var count: UInt64 = 0
        // EAGAIN when nothing was signalled since the last drain: nothing to take.
        _ = read(descriptor, &count, 8)
    }
}

/// Signals delivered as readable data (signalfd) instead of handlers, so they are handled on the player thread
/// between events. The signals are blocked in every thread started after this is made.
public final class SignalSource {
    private let owned: Descriptor
    public var descriptor: Int32 { owned.number }

    public init(_ signals: [Int32]) throws(RuntimeError) {
        var set = sigset_t()
        // pthread_sigmask returns the error number instead of setting errno.
        let failure = signals.withUnsafeBufferPointer {
            vitrine_block_signals($0.baseAddress, Int32($0.count), &set)
        }
        guard failure == 0 else { throw RuntimeError("block signals", errno: failure) }
        owned = try SystemCall.open("create a signalfd") { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
    }

    /// The signals that arrived since the last call.
    public func take() -> [Int32] {
        var signals: [Int32] = []
        var info = signalfd_siginfo()
        while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            signals.append(Int32(info.ssi_signo))
        }
        return signals
    }
}

/// CLOCK_BOOTTIME minus CLOCK_MONOTONIC: it grows only while the system is suspended (clock_gettime(2)).
public enum SleepClock {
    public static func offset() -> Double {
        var boot = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return Double(boot.tv_sec - monotonic.tv_sec) + Double(boot.tv_nsec - monotonic.tv_nsec) / 1e9
    }

    /// Successful suspends since boot (`/sys/power/suspend_stats/success`); 0 where the file is missing.
    public static func suspendCount() -> Int {
        guard let text = try? FileBytes.readText("/sys/power/suspend_stats/success") else { return 0 }
        return Int(text.trimmingWhitespace()) ?? 0
    }
}
