import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Holds a transfer to a number of bytes a second by sleeping after each chunk that ran ahead. libcurl's own
/// limit (CURLOPT_MAX_RECV_SPEED_LARGE) reads up to a hundred buffers between checks, so a photo of a megabyte or
/// two arrives at full speed whatever it says.
final class RateLimiter {
    private let bytesPerSecond: Double
    private var started: Double?
    private var bytes: Double = 0

    init(bytesPerSecond: Double) { self.bytesPerSecond = bytesPerSecond }

    func account(_ count: Int) {
        let now = MonotonicClock.seconds()
        // A pause between files (a listing, a rename) is not saved up as credit for a burst after it.
        if let started, now - started > bytes / bytesPerSecond + 1 {
            self.started = now - bytes / bytesPerSecond
        }
        let start = started ?? now
        started = start
        bytes += Double(count)
        let ahead = bytes / bytesPerSecond - (now - start)
        guard ahead > 0 else { return }
        var pause = timespec(tv_sec: Int(ahead), tv_nsec: Int((ahead - ahead.rounded(.down)) * 1e9))
        var left = timespec()
        while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
    }
}
