import CLinux
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A timerfd on CLOCK_MONOTONIC armed at absolute times, so a deadline does not drift when the loop is late.
public final class MonotonicTimer {
    public let descriptor: Int32

    public init() throws(RuntimeError) {
        descriptor = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard descriptor >= 0 else { throw .last("create a timer") }
    }

    deinit { close(descriptor) }

    /// Fires once at `seconds` (CLOCK_MONOTONIC); a time already past fires at once.
    public func arm(at seconds: Double) {
        let when = max(seconds, 0.000_001)
        var spec = itimerspec()
        spec.it_value.tv_sec = Int(when)
        spec.it_value.tv_nsec = Int((when - Double(Int(when))) * 1e9)
        timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    public func disarm() {
        var spec = itimerspec()
        timerfd_settime(descriptor, 0, &spec, nil)
    }

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
    public let descriptor: Int32

    public init() throws(RuntimeError) {
        descriptor = timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard descriptor >= 0 else { throw .last("create a wall-clock timer") }
    }

    deinit { close(descriptor) }

    /// Fires at `seconds` since the epoch, or when the clock is set.
    public func arm(atEpochSeconds seconds: Int) {
        var spec = itimerspec()
        spec.it_value.tv_sec = seconds
        // TFD_TIMER_CANCEL_ON_SET is (1 << 1) in <sys/timerfd.h>, a macro built from an enum Swift does not see.
        timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME) | (1 << 1), &spec, nil)
    }

    public func disarm() {
        var spec = itimerspec()
        timerfd_settime(descriptor, 0, &spec, nil)
    }

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
public final class Wakeup: @unchecked Sendable {
    // @unchecked: the descriptor never changes after init; eventfd writes and reads are atomic.
    public let descriptor: Int32

    public init() throws(RuntimeError) {
        descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard descriptor >= 0 else { throw .last("create an eventfd") }
    }

    deinit { close(descriptor) }

    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    public func drain() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, 8)
    }
}

/// Signals delivered as readable data (signalfd) instead of handlers, so they are handled on the player thread
/// between events. The signals are blocked in every thread started after this is made.
public final class SignalSource {
    public let descriptor: Int32

    public init(_ signals: [Int32]) throws(RuntimeError) {
        var set = sigset_t()
        guard signals.withUnsafeBufferPointer({ vitrine_block_signals($0.baseAddress, Int32($0.count), &set) }) == 0
        else { throw .last("block signals") }
        descriptor = signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
        guard descriptor >= 0 else { throw .last("create a signalfd") }
    }

    deinit { close(descriptor) }

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
