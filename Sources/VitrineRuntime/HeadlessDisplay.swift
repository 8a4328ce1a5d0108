import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A display without a screen that behaves like DRM: two scanout buffers, one flip in flight, the flip completing
/// at the next tick of a simulated 60 Hz vblank. Frames go to memory and, when asked, to snapshot files.
public final class HeadlessDisplay: ScanoutDisplay {
    public static let refreshRate = 60.0

    public let size: Size
    /// The scanout buffers; `buffers[front]` is "on screen". Charged to the budget like DRM dumb buffers.
    private let buffers: [Frame]
    private var front = 0
    private let vblank: MonotonicTimer
    private let started: Double
    private var flipping: ShownContent?
    /// One content waiting for the flip in flight (a background, or a frame arriving just after one).
    private var waiting: DisplayContent?
    public let snapshots: SnapshotWriter?

    public var eventDescriptors: [Int32] { [vblank.descriptor] }
    public var isBusy: Bool { flipping != nil || waiting != nil }

    public init(size: Size, budget: MemoryBudget, snapshots: SnapshotWriter?) throws(MemoryBudget.Exceeded) {
        self.size = size
        buffers = [
            try Frame(size: size, budget: budget, purpose: "scanout buffer 1 (\(size))"),
            try Frame(size: size, budget: budget, purpose: "scanout buffer 2 (\(size))"),
        ]
        for buffer in buffers { buffer.fill(.black) }
        do {
            vblank = try MonotonicTimer()
        } catch {
            preconditionFailure("\(error)")
        }
        started = MonotonicClock.seconds()
        self.snapshots = snapshots
    }

    /// Puts content on screen at the next vblank; never touches the buffer on screen.
    public func show(_ content: DisplayContent) {
        guard flipping == nil else {
            waiting = content
            return
        }
        flipping = content.paint(
            into: UnsafeMutableRawPointer(buffers[1 - front].pixels), pitch: size.width * 4, size: size,
            front: UnsafeRawPointer(buffers[front].pixels))
        let now = MonotonicClock.seconds()
        let period = 1 / Self.refreshRate
        vblank.arm(at: started + ((now - started) / period + 1).rounded(.down) * period)
    }

    public private(set) var isPoweredOn = true

    public func setPower(_ on: Bool) { isPoweredOn = on }

    public var blendsCleanly: Bool { true }

    public func close() {}

    /// The vblank came: the back buffer becomes the front. Returns the record of the frame now on screen (nil
    /// for a background), and whether a frame flip completed.
    public func handleEvents() -> (completed: ShownContent?, now: Double) {
        vblank.acknowledge()
        let now = MonotonicClock.seconds()
        guard let content = flipping else { return (nil, now) }
        front = 1 - front
        flipping = nil
        if let snapshots {
            switch content {
            case .frame(let record): snapshots.write(buffers[front], record: record, now: now)
            case .blend(let record, let weight):
                snapshots.write(buffers[front], record: record, now: now, fadeWeight: weight)
            case .background: snapshots.write(buffers[front], record: nil, now: now)
            case .overlay: break
            }
        }
        if let waiting {
            self.waiting = nil
            show(waiting)
        }
        return (content, now)
    }
}
