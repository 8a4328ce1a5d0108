import VitrineCore
import VitrineImage
import VitrinePlatform

/// The display state machine wired to the screen that executes its actions, with the timer it asks for (flip
/// watchdog, busy retries). What the player must hear of (content done, a picture back, a redraw, the seat given
/// up) is queued as outputs and taken by the event loop after each event, so nothing re-enters the player while
/// it is in the middle of its own actions.
public final class DisplayController {
    public enum Output {
        /// The content's request is done; `visible` when it is on the glass now (false: taken while the screen is
        /// dark, or replaced before it was shown).
        case completed(DisplayContent, visible: Bool, at: Double)
        /// The screen is lit again; with content when that content was painted for the return.
        case reappeared(DisplayContent?)
        /// The buffers are new or the picture in them was lost: the slide must be painted again.
        case redraw
        /// DRM master is given up: the VT switch may go ahead.
        case seatReleased
        /// A fade is over: the prefetches that waited for it may go to the decoder now.
        case prefetchesReleased([DecodeRequest])
    }

    public let executor: any DisplayExecutor
    private var machine: DisplayMachine<DisplayContent>
    private let timer: MonotonicTimer
    private let log: EventLog
    private var outputs: [Output] = []
    /// What is on the screen: this controller is its one owner.
    public private(set) var screen: ScreenContents
    /// Flips and modesets asked of the kernel since start (`vitrine ctl status`, the VM tests).
    public private(set) var flips = 0
    public private(set) var modesets = 0
    /// The vblank sequence number of the last completed flip, where the driver counts vblanks.
    public private(set) var lastSequence: UInt32?
    /// While a flip completion is handled: the time of its vblank.
    private var glassTime: Double?
    /// The corner's text, painted into every picture as it is painted (not into overlays, which start from a picture
    /// that has it).
    /// The canvas and rotation the text is laid out for are the screen's now (a replug to another mode changes them).
    package var corner: (overlay: TextOverlay, canvas: Size, rotation: Rotation)?
    /// Bytes copied from the screen's buffer for overlays since start, and overlays painted (the benchmark).
    public private(set) var overlayCopy = (bytes: 0, overlays: 0)

    public init(executor: any DisplayExecutor, fadeSeconds: Double?, log: EventLog) throws(RuntimeError) {
        self.executor = executor
        self.log = log
        machine = DisplayMachine(bufferCount: executor.bufferCount)
        screen = ScreenContents(bufferCount: executor.bufferCount, fadeSeconds: fadeSeconds)
        timer = try MonotonicTimer()
    }

    public var eventDescriptors: [Int32] { executor.eventDescriptors + [timer.descriptor] }
    public var size: Size { executor.size }
    /// Seconds between vblanks where flips complete on them; nil where they complete at once.
    public var refreshPeriod: Double? { executor.refreshPeriod }
    /// Whether a flip in flight or content waiting keeps the next picture from being flipped to now.
    public var flipInFlight: Bool { machine.flipInFlight }
    public var snapshots: SnapshotWriter? { executor.snapshots }
    /// The power asked for (what `status` and the metrics report).
    public var isPoweredOn: Bool { machine.wantsPower }
    /// Our pictures are on the glass: on, the VT ours, connected, with buffers.
    public var isLit: Bool { machine.isLit }
    /// A flip is in flight or content waits for one.
    public var isBusy: Bool { machine.isBusy }
    /// With a third buffer: a flip is in flight and the next picture can be painted meanwhile.
    public var canPrepare: Bool { machine.canPrepare }
    /// Whether a crossfade can be shown now: lit, two buffers, flips completing.
    public var canFade: Bool { machine.isLit && machine.blendsCleanly && executor.blendsCleanly }
    /// Whether a clip's pictures may come as NV12: a plane converts them, and the corner's text (the clock, MQTT's
    /// texts), if any, goes on a plane above them. Painted into every picture, it would have them turned into RGB,
    /// the work the plane saves; a corner that appears mid-clip where there is no such plane is painted so.
    public var takesPlanarClips: Bool {
        executor.takesPlanarFrames && (corner?.overlay.corner == nil || executor.takesCornerLayer)
    }
    /// Whether this screen can change a picture in steps without tearing at all (two buffers flipped on vblank).
    public var blendsCleanly: Bool { executor.blendsCleanly }

    public func show(_ content: DisplayContent, now: Double = MonotonicClock.seconds()) {
        send(.show(content, overlay: content.isOverlay, now: now), now: now)
    }

    /// Crossfade length in seconds; nil when slides cut.
    public var fadeSeconds: Double? {
        get { screen.fadeSeconds }
        set { screen.fadeSeconds = newValue }
    }

    /// A new slide: a crossfade from the one on screen when fades are on and the screen can show one, else a cut.
    /// Only the first step now: painting a second one meanwhile would hold up seeing the first land (the viewer's
    /// latency); the third buffer is used from the first completed step on.
    public func present(_ frame: Frame, _ record: PresentRecord, now: Double) {
        show(DisplayContent(screen.present(frame, record, screenCanFade: canFade, now: now)), now: now)
    }

    /// A clip ended on `frame` (a copy of its last picture): the next slide fades out of it.
    public func clipEnded(on frame: Frame) { screen.clipEnded(on: frame) }

    /// Shows the fade's next steps while the screen can take them: one when nothing is flipping, and with a third
    /// buffer one more, painted while the flip is in flight (so it makes the next vblank). A dark screen takes
    /// whatever comes (the steps hurry to the last), and so does a fade the viewer has already asked past.
    public func feedFade(now: Double, hurry: Bool) {
        if hurry || !canFade { screen.hurryFade() }
        while screen.wantsFadeStep, !isBusy || canPrepare || !isLit,
            let step = screen.nextFadeStep(now: now, vblanksAhead: canPrepare ? 2 : 1)
        {
            show(DisplayContent(step), now: now)
        }
    }

    /// Whether a decode must wait, for a fade to end (it then comes back as `prefetchesReleased`) or for a starting
    /// clip's first second (`releaseDeferred`).
    public func deferPrefetch(_ request: DecodeRequest, clipStarting: Bool) -> Bool {
        screen.deferPrefetch(request, clipStarting: clipStarting)
    }
    public func releaseDeferred() -> [DecodeRequest] { screen.releaseDeferred() }
    public func cancelDeferred(_ id: SlideID) { screen.cancelDeferred(id) }

    public func setPower(_ on: Bool, now: Double = MonotonicClock.seconds()) {
        send(.power(on: on, now: now), now: now)
    }
    public func releaseSeat(now: Double) { send(.seatReleaseRequested(now: now), now: now) }
    public func returnSeat(now: Double) { send(.seatReturned(now: now), now: now) }
    public func unplugged(now: Double) { send(.unplugged(now: now), now: now) }
    public func plugged(sameMode: Bool, now: Double) { send(.plugged(sameMode: sameMode, now: now), now: now) }
    public func woke(now: Double) { send(.woke(now: now), now: now) }

    /// Reads flip completions and the timer when one of `eventDescriptors` was readable.
    public func handleReadable(now: Double) {
        for completion in executor.readCompletions() {
            lastSequence = completion.sequence
            // What this flip put on the glass got there at its vblank, which may be a while before now.
            glassTime = completion.time
            send(.flipCompleted(serial: completion.serial, now: now), now: now)
            glassTime = nil
        }
        if timer.acknowledge() { send(.timerFired(now: now), now: now) }
    }

    /// What happened since the last call, in order.
    public func takeOutputs() -> [Output] {
        defer { outputs = [] }
        return outputs
    }

    public func close() { executor.close(flipInFlight: machine.flipInFlight) }

    private func send(_ event: DisplayMachine<DisplayContent>.Event, now: Double) {
        for action in machine.handle(event) { execute(action, now: now) }
    }

    private func execute(_ action: DisplayMachine<DisplayContent>.Action, now: Double) {
        switch action {
        case .paint(let content, let buffer, let front):
            var picture = content
            if !content.fits(executor.size) {
                // A frame decoded for the mode before a replug: black until the slide is made again.
                log(.warning, "\(executor.name): a picture made for another size was dropped")
                picture = .background(.black)
            }
            guard case .overlay(_, let draw) = picture else {
                let painted = picture.shown.picture
                // Only where the corner shows something: an NV12 clip picture decorated would be turned into RGB, so
                // its text goes on the plane above where there is one.
                if let corner, corner.overlay.corner != nil {
                    let decorated = DisplayContent.decorated(picture) { pixels, _, stride in
                        corner.overlay.decorate(
                            canvas: corner.canvas, rotation: corner.rotation, pixels: pixels, stride: stride)
                    }
                    if executor.takesCornerLayer, case .frame(let frame, _) = picture, frame.layout == .nv12 {
                        executor.paint(picture, buffer: buffer, front: front)
                        if let layer = corner.overlay.cornerLayer(canvas: corner.canvas, rotation: corner.rotation),
                            !executor.showLayer(layer, buffer: buffer)
                        {
                            executor.paint(decorated, buffer: buffer, front: front)
                        }
                        if let painted { screen.painted(painted, into: buffer) }
                        return
                    }
                    picture = decorated
                }
                executor.paint(picture, buffer: buffer, front: front)
                if let painted { screen.painted(painted, into: buffer) }
                return
            }
            let rects = buffer == front ? [] : screen.damage.rectsToCopy(into: buffer, from: front)
            var touched: [Placement.Rect] = []
            executor.paint(
                .overlay(copying: rects) { pixels, size, stride in
                    touched = draw(pixels, size, stride)
                    return touched
                }, buffer: buffer, front: front)
            screen.overlayPainted(into: buffer, from: front, touched: touched)
            overlayCopy.overlays += 1
            overlayCopy.bytes +=
                rects.map { $0.reduce(0) { $0 + $1.width * $1.height * 4 } } ?? executor.size.pixelCount * 4
        case .flip(let buffer, let serial):
            flips += 1
            if let refusal = executor.flip(buffer: buffer, serial: serial) {
                send(.flipRefused(refusal, now: now), now: now)
            }
        case .modeset(let buffer):
            modesets += 1
            if !executor.modeset(buffer: buffer) {
                screen.pixelsLost()
                outputs.append(.redraw)
            }
        case .powerOn:
            executor.setPower(true)
        case .powerOff:
            // fbdev without a blank paints its buffers black.
            screen.pixelsLost()
            executor.setPower(false)
        case .armTimer(let at):
            timer.arm(at: at)
        case .disarmTimer:
            timer.disarm()
        case .dropMaster:
            executor.dropMaster()
            outputs.append(.seatReleased)
        case .takeMaster:
            // A console may have drawn into the buffers meanwhile (fbdev).
            screen.pixelsLost()
            send(.masterTaken(executor.takeMaster(), now: now), now: now)
        case .rebuildBuffers:
            screen.buffersRebuilt(count: executor.bufferCount)
            send(.rebuilt(executor.rebuildBuffers(), now: now), now: now)
        case .completed(let content, let visible):
            if visible { executor.didShow(content.shown, buffer: machine.front, now: now) }
            let at = visible ? glassTime ?? now : now
            switch content.shown {
            case .blend: screen.fadeStepDone(visible: visible, sequence: lastSequence, now: at)
            case .frame:
                let released = screen.slideDone(visible: visible, sequence: lastSequence)
                if !released.isEmpty { outputs.append(.prefetchesReleased(released)) }
            case .background, .overlay: break
            }
            outputs.append(.completed(content, visible: visible, at: at))
        case .reappeared(let content):
            // Text over the picture aside, what the buffer on screen holds.
            let picture = content?.shown.picture ?? screen.picture(in: machine.front)
            executor.didShow(picture.map(ShownContent.init), buffer: machine.front, now: now)
            outputs.append(.reappeared(content))
        case .redraw:
            outputs.append(.redraw)
        case .log(let line):
            log("\(executor.name): \(line)")
        case .warn(let line):
            log(.warning, "\(executor.name): \(line)")
        }
    }
}
