import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A display without a screen that behaves like DRM: two scanout buffers, flips completing at the next tick of a
/// simulated 60 Hz vblank. Frames go to memory and, when asked, to snapshot files (one per picture that reaches
/// the "glass": nothing while the screen is off).
public final class HeadlessDisplay: DisplayExecutor {
    public static let refreshRate = 60.0

    public let size: Size
    public var bufferCount: Int { buffers.count }
    public var name: String { "headless \(size)" }
    /// The scanout buffers. Charged to the budget like DRM dumb buffers.
    private let buffers: [Frame]
    private let vblank: MonotonicTimer
    private let started: Double
    /// The flip waiting for the next vblank.
    private var pending: UInt64?
    private var vblankCount: UInt32 = 0
    public let snapshots: SnapshotWriter?

    public var eventDescriptors: [Int32] { [vblank.descriptor] }

    public init(size: Size, budget: MemoryBudget, bufferCount: Int = 2, snapshots: SnapshotWriter?)
        throws(MemoryBudget.Exceeded)
    {
        self.size = size
        var buffers: [Frame] = []
        for number in 1...bufferCount {
            buffers.append(try Frame(size: size, budget: budget, purpose: "scanout buffer \(number) (\(size))"))
        }
        self.buffers = buffers
        for buffer in buffers { buffer.fill(.black) }
        do {
            vblank = try MonotonicTimer()
        } catch {
            preconditionFailure("\(error)")
        }
        started = MonotonicClock.seconds()
        self.snapshots = snapshots
    }

    public func paint(_ content: DisplayContent, buffer: Int, front: Int) {
        _ = content.paint(
            into: UnsafeMutableRawPointer(buffers[buffer].pixels), pitch: size.width * 4, size: size,
            front: UnsafeRawPointer(buffers[front].pixels))
    }

    public func flip(buffer: Int, serial: UInt64) -> DisplayMachine<DisplayContent>.Refusal? {
        guard pending == nil else { return .busy }
        pending = serial
        let now = MonotonicClock.seconds()
        let period = 1 / Self.refreshRate
        vblank.arm(at: started + ((now - started) / period + 1).rounded(.down) * period)
        return nil
    }

    public func modeset(buffer: Int) -> Bool { true }

    public func setPower(_ on: Bool) {}

    public func readCompletions() -> [(serial: UInt64, sequence: UInt32, time: Double)] {
        guard vblank.acknowledge(), let serial = pending else { return [] }
        pending = nil
        vblankCount &+= 1
        return [(serial, vblankCount, MonotonicClock.seconds())]
    }

    public func didShow(_ shown: ShownContent?, buffer: Int, now: Double) {
        guard let snapshots, let shown else { return }
        switch shown {
        case .frame(let record): snapshots.write(buffers[buffer], record: record, now: now)
        case .blend(let record, let weight):
            snapshots.write(buffers[buffer], record: record, now: now, fadeWeight: weight)
        case .background: snapshots.write(buffers[buffer], record: nil, now: now)
        case .overlay: snapshots.writeOverlay(buffers[buffer], now: now)
        }
    }

    public func close(flipInFlight: Bool) {}
}
