import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Memory figures as the user sees them: this process's resident set and the system's MemAvailable.
public enum ProcessMemory {
    /// Resident bytes now, and of them the process's own (heap, stacks, frames), from one read of
    /// `/proc/self/statm`: the second field, and the second less the third (the file-backed and shared pages).
    /// Library and binary pages are clean and the kernel can drop and read them again under pressure; anonymous
    /// memory it can only swap, which a frame has not got.
    public static func resident() -> (total: Int, anonymous: Int) {
        guard let text = try? FileBytes.readText("/proc/self/statm") else { return (0, 0) }
        let fields = text.split(separator: " ").compactMap { Int($0) }
        guard fields.count > 2 else { return (0, 0) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        return (fields[1] * page, max(0, fields[1] - fields[2]) * page)
    }

    /// The most this process has been resident since it started (getrusage(2) `ru_maxrss`, kilobytes on Linux).
    public static func peakResidentBytes() -> Int {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        return usage.ru_maxrss * 1024
    }

    /// CPU seconds this process has used (user and system, every thread), from getrusage(2).
    public static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }

    /// `MemAvailable` from `/proc/meminfo`, in bytes.
    public static func availableBytes() -> Int { meminfo("MemAvailable:") }

    /// `MemTotal` from `/proc/meminfo` (the board's memory), in bytes.
    public static func totalBytes() -> Int { meminfo("MemTotal:") }

    private static func meminfo(_ field: String) -> Int {
        guard let text = try? FileBytes.readText("/proc/meminfo") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            let number = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return number * 1024
        }
        return 0
    }
}
