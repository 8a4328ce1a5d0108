import VitrineCore
import VitrineImage

/// A screen as the display state machine drives it: the DRM output, fbdev, or the headless stand-in. It keeps
/// its handles and buffers and does what it is told; when, and whether, is the machine's (`DisplayMachine`).
public protocol DisplayExecutor: AnyObject {
    /// The scanout buffers' size.
    var size: Size { get }
    /// Two buffers flipped between, or one painted in place (fbdev without panning).
    var bufferCount: Int { get }
    /// Descriptors the event loop watches for flip completions.
    var eventDescriptors: [Int32] { get }
    var snapshots: SnapshotWriter? { get }
    /// Whether a picture can change in steps without tearing (two buffers flipped on vblank).
    var blendsCleanly: Bool { get }
    /// What the screen is, for log lines.
    var name: String { get }
    /// Seconds between vblanks, where flips complete on them (nil: at once, as headless and fbdev do).
    var refreshPeriod: Double? { get }
    /// Paints content into a buffer; `front` is the buffer on screen, which overlays start from.
    func paint(_ content: DisplayContent, buffer: Int, front: Int)
    /// Asks for a flip to the buffer with a completion that carries `serial`; nil when the kernel took it.
    func flip(buffer: Int, serial: UInt64) -> DisplayMachine<DisplayContent>.Refusal?
    /// Sets the mode with the buffer on screen. False when the picture in the buffers was lost meanwhile (a
    /// console drew over fbdev memory) and must be drawn again.
    func modeset(buffer: Int) -> Bool
    func setPower(_ on: Bool)
    func dropMaster()
    func takeMaster() -> Bool
    /// New buffers for a new mode; false when they could not be made (the reason is logged).
    func rebuildBuffers() -> Bool
    /// The flips completed since the last call: their serials, vblank sequence numbers and vblank times
    /// (CLOCK_MONOTONIC seconds).
    func readCompletions() -> [(serial: UInt64, sequence: UInt32, time: Double)]
    /// A picture reached the glass from `buffer` (the headless display writes its snapshot).
    func didShow(_ shown: ShownContent?, buffer: Int, now: Double)
    /// Gives the screen back as it was found; waits for a flip in flight first when there is one.
    func close(flipInFlight: Bool)
    /// Whether NV12 frames (a clip's pictures) may be painted: a plane scans them out and converts the colours.
    var takesPlanarFrames: Bool { get }
    /// Whether the corner's text can go on a plane above a clip's NV12 picture (`showLayer`).
    var takesCornerLayer: Bool { get }
    /// The corner's text over the picture just painted into `buffer`, on the plane above it, from that buffer's
    /// next flip on (a paint takes it off again). False when it could not be placed: the caller paints it in.
    func showLayer(_ layer: CornerLayer, buffer: Int) -> Bool
}

extension DisplayExecutor {
    public var snapshots: SnapshotWriter? { nil }
    public var takesPlanarFrames: Bool { false }
    public var takesCornerLayer: Bool { false }
    public func showLayer(_ layer: CornerLayer, buffer: Int) -> Bool { false }
    public var blendsCleanly: Bool { bufferCount >= 2 }
    public var refreshPeriod: Double? { nil }
    public func dropMaster() {}
    public func takeMaster() -> Bool { true }
    public func rebuildBuffers() -> Bool { false }
    public func didShow(_ shown: ShownContent?, buffer: Int, now: Double) {}
}
