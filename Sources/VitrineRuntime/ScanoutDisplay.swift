import VitrineCore

/// What a display puts on screen.
public enum DisplayContent {
    case frame(Frame, PresentRecord)
    case background(RGBColor)
    /// The picture on screen with something painted over it: the front buffer is copied to the back buffer, the
    /// closure paints there (pixels, size, row stride in pixels), and that buffer is flipped to.
    case overlay((UnsafeMutablePointer<UInt32>, Size, Int) -> Void)
}

/// What a completed flip put on screen. The frame itself is not kept: its pixels are in the scanout buffer.
public enum ShownContent {
    case frame(PresentRecord)
    case background
    /// Text painted over the picture on screen (not a new picture).
    case overlay
}

/// A screen with two scanout buffers and one flip in flight: the DRM output or the headless stand-in.
public protocol ScanoutDisplay: AnyObject {
    /// The scanout buffers' size.
    var size: Size { get }
    /// Descriptors the event loop watches; when one is readable, `handleEvents` finishes what it announces.
    var eventDescriptors: [Int32] { get }
    var snapshots: SnapshotWriter? { get }
    /// Puts content on screen at the next flip; never writes into the buffer being scanned out. Content that
    /// arrives while a flip is in flight waits for it.
    func show(_ content: DisplayContent)
    /// Whether a flip is in flight or content waits for one (overlays are then held back by the caller).
    var isBusy: Bool { get }
    /// Finishes a completed flip: returns what is now on screen, if a flip completed.
    func handleEvents() -> (completed: ShownContent?, now: Double)
    /// Screen power: off blanks the output; on sets the mode again and shows the front buffer (some panels come
    /// back dark otherwise).
    func setPower(_ on: Bool)
    var isPoweredOn: Bool { get }
    /// Waits for a flip in flight and gives the screen back as it was found.
    func close()
}
