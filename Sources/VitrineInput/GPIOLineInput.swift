import CGPIOD
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One GPIO line requested as an input that reports both edges, through libgpiod 1.6 (the only file that calls
/// it). The event descriptor goes into the player's epoll; each edge comes with the kernel's CLOCK_MONOTONIC
/// timestamp, so debounce and long presses are timed from when the edge happened, not when the loop read it.
/// Owns the chip handle (which owns the line); `close` releases both, and the line is free for others at once.
public final class GPIOLineInput {
    public struct Edge: Equatable, Sendable {
        /// The line became active (high, or low when active-low).
        public var active: Bool
        public var seconds: Double
    }

    public let line: GPIOLine
    public let descriptor: Int32
    private var chip: OpaquePointer?
    private let handle: OpaquePointer

    public init(_ line: GPIOLine, consumer: String = "vitrine") throws(GPIOError) {
        self.line = line
        let name = line.description
        let chip: OpaquePointer
        let found: OpaquePointer?
        if let chipName = line.chip {
            guard let opened = gpiod_chip_open_lookup(chipName) else {
                throw GPIOError(line: name, operation: "open chip \(chipName)", errno: errno == 0 ? ENOENT : errno)
            }
            chip = opened
            if let lineName = line.name {
                found = gpiod_chip_find_line(chip, lineName)
            } else {
                found = gpiod_chip_get_line(chip, UInt32(line.offset ?? 0))
            }
        } else {
            // Searches every chip for the name (a Pi 5's header lines are on a chip whose number moves).
            found = gpiod_line_find(line.name ?? "")
            guard let found, let owner = gpiod_line_get_chip(found) else {
                throw GPIOError(line: name, operation: "find the line on any chip", errno: errno == 0 ? ENOENT : errno)
            }
            chip = owner
        }
        guard let found else {
            let failure = errno == 0 ? ENOENT : errno
            gpiod_chip_close(chip)
            throw GPIOError(line: name, operation: "find the line", errno: failure)
        }
        var flags: Int32 = line.activeLow ? Int32(VITRINE_GPIOD_FLAG_ACTIVE_LOW) : 0
        switch line.bias {
        case .asIs: break
        case .disabled: flags |= Int32(VITRINE_GPIOD_FLAG_BIAS_DISABLE)
        case .pullUp: flags |= Int32(VITRINE_GPIOD_FLAG_BIAS_PULL_UP)
        case .pullDown: flags |= Int32(VITRINE_GPIOD_FLAG_BIAS_PULL_DOWN)
        }
        guard vitrine_gpiod_request_both_edges(found, consumer, flags) == 0 else {
            let failure = errno
            gpiod_chip_close(chip)
            throw GPIOError(line: name, operation: "request it for edge events", errno: failure)
        }
        let events = gpiod_line_event_get_fd(found)
        guard events >= 0 else {
            let failure = errno
            gpiod_line_release(found)
            gpiod_chip_close(chip)
            throw GPIOError(line: name, operation: "get its event descriptor", errno: failure)
        }
        self.chip = chip
        handle = found
        descriptor = events
    }

    /// Where `line` is (`gpiochip0 line 17`), without requesting it: for `vitrine doctor`.
    public static func locate(_ line: GPIOLine) -> Result<String, GPIOError> {
        let name = line.description
        let chip: OpaquePointer
        let found: OpaquePointer?
        if let chipName = line.chip {
            guard let opened = gpiod_chip_open_lookup(chipName) else {
                return .failure(
                    GPIOError(line: name, operation: "open chip \(chipName)", errno: errno == 0 ? ENOENT : errno))
            }
            chip = opened
            found =
                line.name.map { gpiod_chip_find_line(chip, $0) } ?? gpiod_chip_get_line(chip, UInt32(line.offset ?? 0))
        } else {
            found = gpiod_line_find(line.name ?? "")
            guard let found, let owner = gpiod_line_get_chip(found) else {
                return .failure(
                    GPIOError(line: name, operation: "find the line on any chip", errno: errno == 0 ? ENOENT : errno))
            }
            chip = owner
        }
        defer { gpiod_chip_close(chip) }
        guard let found else {
            return .failure(GPIOError(line: name, operation: "find the line", errno: errno == 0 ? ENOENT : errno))
        }
        return .success("\(String(cString: gpiod_chip_name(chip))) line \(gpiod_line_offset(found))")
    }

    deinit { close() }

    /// Releases the line and closes the chip; the descriptor is invalid afterwards. Safe to call twice.
    public func close() {
        guard let chip else { return }
        gpiod_line_release(handle)
        gpiod_chip_close(chip)
        self.chip = nil
    }

    /// The line's level now (active or not); nil when it cannot be read.
    public var isActive: Bool? {
        guard chip != nil else { return nil }
        let value = gpiod_line_get_value(handle)
        return value < 0 ? nil : value == 1
    }

    /// The edges waiting on the descriptor, oldest first (none when it is not readable).
    public func readEdges() -> [Edge] {
        guard chip != nil else { return [] }
        var edges: [Edge] = []
        var events = [gpiod_line_event](repeating: gpiod_line_event(), count: 16)
        while true {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 0) == 1 else { break }
            let count = gpiod_line_event_read_multiple(handle, &events, UInt32(events.count))
            guard count > 0 else { break }
            for event in events.prefix(Int(count)) {
                edges.append(
                    Edge(
                        active: event.event_type == Int32(VITRINE_GPIOD_EVENT_RISING),
                        seconds: Double(event.ts.tv_sec) + Double(event.ts.tv_nsec) / 1e9))
            }
            if count < events.count { break }
        }
        return edges
    }
}
