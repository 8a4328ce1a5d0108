#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// CLOCK_MONOTONIC in seconds: never jumps with wall-clock changes.
public enum MonotonicClock {
    public static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID): what its own work cost, whatever else runs.
public enum ThreadCPUClock {
    public static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
