/// Whether and how content reaches the glass: one state machine for every display (DRM, fbdev, headless), so the
/// screen's power, the seat (VT and DRM master), the connector and the buffers are kept in one place. Events in,
/// actions out; the Linux side only executes the actions and reports what the kernel said.
///
/// Rules it keeps:
/// - Never paint into the buffer on screen (with two or three buffers), at most one flip in flight. With three,
///   the next content is painted into the spare buffer while a flip is in flight and flipped to as soon as it
///   lands, so a paint that takes most of a frame still makes every vblank.
/// - Never flip or set the mode while the screen is off, the VT is away, the connector is unplugged or there are
///   no buffers. Content that arrives meanwhile is accepted at once (the player goes on) and only replaces what
///   will be shown on return; overlays are dropped then (there is nothing to paint them over).
/// - Power off, giving the seat away and rebuilding the buffers wait for the flip in flight.
/// - A refused flip is classified: EBUSY is tried again a vblank later; a refusal while the screen should be dark
///   is a bug (logged, the content waits); otherwise this one frame is put up with a modeset. The next frame tries a
///   flip again, so the fallback is never permanent.
/// - A flip whose event does not come within `flipTimeout` is taken as done (some drivers send none); a late event
///   for it is recognised by its serial number and ignored.
/// - Content that is replaced before it reached the screen is still completed (not visible), so the player is
///   never left waiting for a flip that will not come.
public struct DisplayMachine<Content> {
    /// Why the kernel refused a page flip (from errno).
    public enum Refusal: Equatable, Sendable {
        /// EBUSY: a flip is still pending in the kernel.
        case busy
        /// EINVAL: an atomic driver refuses an event on an inactive CRTC.
        case invalid
        /// EACCES/EPERM: not DRM master.
        case denied
        case other(String)
    }

    public enum Event {
        /// New content for the screen. An overlay paints over the picture on screen.
        case show(Content, overlay: Bool, now: Double)
        /// The kernel reported the flip with this serial done.
        case flipCompleted(serial: UInt64, now: Double)
        /// The flip just asked for was refused.
        case flipRefused(Refusal, now: Double)
        /// The display's timer (flip watchdog or busy retry) fired.
        case timerFired(now: Double)
        case power(on: Bool, now: Double)
        /// The VT is being switched away: give the screen up (after the flip in flight).
        case seatReleaseRequested(now: Double)
        /// The VT is ours again.
        case seatReturned(now: Double)
        /// The answer to `takeMaster`.
        case masterTaken(Bool, now: Double)
        case unplugged(now: Double)
        /// The connector is back; `sameMode` false when the buffers must be made again for another mode.
        case plugged(sameMode: Bool, now: Double)
        /// The answer to `rebuildBuffers`.
        case rebuilt(Bool, now: Double)
        /// The system woke from sleep: some drivers come back dark, so the mode is set again.
        case woke(now: Double)
    }

    public enum Action {
        /// Paint content into a buffer (an overlay starts from a copy of `front`).
        case paint(Content, buffer: Int, front: Int)
        /// Page flip to the buffer, with a completion event carrying `serial`.
        case flip(buffer: Int, serial: UInt64)
        /// Set the mode with this buffer on the CRTC (lights the panel).
        case modeset(buffer: Int)
        /// DPMS on after a modeset.
        case powerOn
        /// DPMS off, or the CRTC disabled when the connector has no DPMS.
        case powerOff
        case armTimer(at: Double)
        case disarmTimer
        /// Give DRM master up (and let the VT switch go ahead).
        case dropMaster
        /// Take DRM master back; answered with `masterTaken`.
        case takeMaster
        /// Make buffers for the connector's new mode; answered with `rebuilt`.
        case rebuildBuffers
        /// The content's request is done: `visible` when it reached the glass now, false when it was accepted while
        /// the screen is dark or replaced before it was shown.
        case completed(Content, visible: Bool)
        /// The screen is lit again with the buffer on screen: `content` was painted for the return (it had waited),
        /// nil when the picture that was there before is back.
        case reappeared(Content?)
        /// The buffers are new and black: the player should paint the slide again.
        case redraw
        case log(String)
        case warn(String)
    }

    public enum Seat: Equatable, Sendable {
        case ours
        /// Asked to give the screen up; waits for the flip in flight.
        case releasing
        case away
        /// `takeMaster` was asked for.
        case returning
    }

    /// How long a flip may take before it is taken as done.
    public static var flipTimeout: Double { 0.25 }
    /// EBUSY is tried again after this long (a vblank at 60 Hz).
    public static var busyRetryDelay: Double { 1.0 / 60 }
    /// After this many EBUSY in a row the frame goes up with a modeset.
    public static var busyRetryLimit: Int { 30 }

    public let bufferCount: Int
    public private(set) var front = 0
    /// The power asked for (schedule, command, presence).
    public private(set) var wantsPower = true
    public private(set) var seat = Seat.ours
    public private(set) var connected = true
    public private(set) var hasBuffers = true
    /// The content painted into the buffer whose flip is in flight (or being retried), and that buffer.
    private var inFlight: (content: Content, buffer: Int)?
    /// With three buffers: the next content, already painted into the spare buffer while a flip is in flight, so it
    /// is flipped to the moment that flip completes (the paint is off the vblank's critical path).
    private var prepared: (content: Content, buffer: Int)?
    private var flipSerial: UInt64 = 0
    /// Content that waits: for the flip in flight, or for the screen to be lit again.
    private var waiting: Content?
    /// The waiting content was already completed (taken while the screen was dark).
    private var waitingAccepted = false
    private var retryingBusy = false
    private var busyRetries = 0
    /// The last flip was refused or timed out: pictures may tear until a flip completes again.
    public private(set) var flipsFailing = false
    private var saidFlipsFailing = false
    /// The mode must be set before the next picture (a start, a VT return, a plug, a wake, power on).
    private var needsModeset = true
    /// Whether `powerOff` was sent and nothing has lit the screen since.
    private var poweredDown = false
    /// Whether a buffer holds a picture of ours (false at start and after a rebuild).
    private var hasPicture = false
    private var rebuildPending = false

    public init(bufferCount: Int) {
        precondition((1...3).contains(bufferCount), "one to three scanout buffers")
        self.bufferCount = bufferCount
    }

    /// The screen shows our pictures now: on, ours, connected, with buffers.
    public var isLit: Bool { wantsPower && seat == .ours && connected && hasBuffers }
    /// A flip is in flight or content waits (an overlay would be painted over a picture that is about to go).
    public var isBusy: Bool { inFlight != nil || waiting != nil || prepared != nil }
    public var flipInFlight: Bool { inFlight != nil }
    /// With three buffers: a flip is in flight and the next content would be painted into the spare buffer now.
    public var canPrepare: Bool {
        bufferCount == 3 && isLit && inFlight != nil && prepared == nil && waiting == nil && !pendingTransition
    }
    /// Pictures can change in steps without tearing: two buffers, flips working, the screen lit.
    public var blendsCleanly: Bool { bufferCount >= 2 && !flipsFailing }
    /// The buffer to paint the next picture into when no flip is in flight.
    private var back: Int { (front + 1) % bufferCount }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .show(let content, let overlay, let now):
            return show(content, overlay: overlay, now: now)
        case .flipCompleted(let serial, let now):
            guard let flight = inFlight, serial == flipSerial, !retryingBusy else { return [] }
            if flipsFailing {
                flipsFailing = false
                if saidFlipsFailing {
                    saidFlipsFailing = false
                    return [.log("page flips complete again")] + flipDone(flight, now: now)
                }
            }
            return flipDone(flight, now: now)
        case .flipRefused(let refusal, let now):
            return refused(refusal, now: now)
        case .timerFired(let now):
            guard let flight = inFlight else { return [] }
            if retryingBusy {
                retryingBusy = false
                return flip(to: flight.buffer, now: now)
            }
            flipsFailing = true
            var actions = flipDone(flight, now: now)
            if !saidFlipsFailing {
                saidFlipsFailing = true
                actions.insert(
                    .warn(
                        "no page-flip event within \(Int(Self.flipTimeout * 1000)) ms; taking the flip as done "
                            + "(crossfades wait until flips complete again)"), at: 0)
            }
            return actions
        case .power(let on, let now):
            guard on != wantsPower else { return [] }
            wantsPower = on
            if on { needsModeset = true }
            return settle(now: now)
        case .seatReleaseRequested(let now):
            guard seat == .ours || seat == .returning else { return [] }
            seat = .releasing
            return settle(now: now)
        case .seatReturned:
            guard seat == .away || seat == .releasing else { return [] }
            // A release still waiting for its flip is simply called off: the seat never went away.
            if seat == .releasing {
                seat = .ours
                return []
            }
            seat = .returning
            return [.takeMaster]
        case .masterTaken(let taken, let now):
            guard seat == .returning else { return [] }
            guard taken else {
                seat = .away
                return [.warn("the VT is back but DRM master could not be taken; the screen waits for the next switch")]
            }
            seat = .ours
            // Whatever was on screen meanwhile (the console) may have lit the panel or set another mode.
            needsModeset = true
            poweredDown = false
            return settle(now: now)
        case .unplugged:
            connected = false
            return []
        case .plugged(let sameMode, let now):
            connected = true
            needsModeset = true
            poweredDown = false
            if !sameMode { rebuildPending = true }
            return settle(now: now)
        case .rebuilt(let ok, let now):
            hasBuffers = ok
            guard ok else {
                return [.warn("no scanout buffers for the new mode; the screen waits for the connector to change")]
            }
            front = 0
            hasPicture = false
            needsModeset = true
            var actions: [Action] = []
            // What waited was made for the old size.
            if let old = waiting {
                waiting = nil
                if !waitingAccepted { actions.append(.completed(old, visible: false)) }
            }
            return actions + [.redraw] + settle(now: now)
        case .woke(let now):
            needsModeset = true
            poweredDown = false
            return settle(now: now)
        }
    }

    private mutating func show(_ content: Content, overlay: Bool, now: Double) -> [Action] {
        // An overlay is painted over the picture on screen; with nothing lit (or a picture about to change) there
        // is nothing to paint it over.
        if overlay && (!isLit || !hasPicture || waiting != nil) { return [.completed(content, visible: false)] }
        var actions: [Action] = []
        if !overlay, isLit, let flight = inFlight, bufferCount == 3, waiting == nil, !pendingTransition {
            // Painted now into the buffer that is neither on screen nor flipping; flipped when the flight lands.
            if let old = prepared { actions.append(.completed(old.content, visible: false)) }
            let spare = 3 - front - flight.buffer
            prepared = (content, spare)
            return actions + [.paint(content, buffer: spare, front: front)]
        }
        if let old = waiting, !waitingAccepted { actions.append(.completed(old, visible: false)) }
        waiting = content
        waitingAccepted = false
        guard isLit else {
            // Dark: the content is taken (the player goes on) and shown on return.
            waitingAccepted = true
            return actions + [.completed(content, visible: false)] + settle(now: now)
        }
        return actions + settle(now: now)
    }

    /// Power off, a release or a rebuild waits for the flight: nothing more is prepared meanwhile.
    private var pendingTransition: Bool { !wantsPower || seat != .ours || !connected || rebuildPending }

    private mutating func flipDone(_ flight: (content: Content, buffer: Int), now: Double) -> [Action] {
        inFlight = nil
        busyRetries = 0
        front = flight.buffer
        hasPicture = true
        return [.disarmTimer, .completed(flight.content, visible: true)] + launchPrepared(now: now) + settle(now: now)
    }

    /// The prepared content's flip, at once; or, when the screen is to go dark meanwhile, the content waits.
    private mutating func launchPrepared(now: Double) -> [Action] {
        guard let next = prepared else { return [] }
        prepared = nil
        guard isLit, !pendingTransition, !needsModeset else {
            // The screen goes dark (or is set up again) first: the prepared content waits like any other, unless
            // newer content already does.
            if waiting != nil { return [.completed(next.content, visible: false)] }
            waiting = next.content
            waitingAccepted = !isLit
            return isLit ? [] : [.completed(next.content, visible: false)]
        }
        inFlight = next
        return flip(to: next.buffer, now: now)
    }

    private mutating func refused(_ refusal: Refusal, now: Double) -> [Action] {
        guard let flight = inFlight else { return [] }
        let content = flight.content
        switch refusal {
        case .busy where busyRetries < Self.busyRetryLimit:
            busyRetries += 1
            retryingBusy = true
            return [.armTimer(at: now + Self.busyRetryDelay)]
        case .invalid where !isLit, .denied where !isLit:
            // Not reached while this machine keeps its rules: the kernel is in another state than we think.
            inFlight = nil
            var actions: [Action] = [
                .disarmTimer, .warn("bug: a page flip was tried while the screen is dark (\(refusal))"),
            ]
            if let newer = waiting {
                // The newer content will be shown on return; this one is done.
                if !waitingAccepted { actions.append(.completed(newer, visible: false)) }
                waitingAccepted = true
                return actions + [.completed(content, visible: false)] + launchPrepared(now: now)
            }
            waiting = content
            waitingAccepted = true
            return actions + [.completed(content, visible: false)] + launchPrepared(now: now)
        default:
            busyRetries = 0
            flipsFailing = true
            var actions: [Action] = [.disarmTimer]
            if !saidFlipsFailing {
                saidFlipsFailing = true
                actions.append(
                    .warn("page flip refused (\(Self.describe(refusal))); setting the mode for this frame instead"))
            }
            inFlight = nil
            front = flight.buffer
            hasPicture = true
            return actions + [.modeset(buffer: front), .completed(content, visible: true)] + launchPrepared(now: now)
                + settle(now: now)
        }
    }

    static func describe(_ refusal: Refusal) -> String {
        switch refusal {
        case .busy: return "busy"
        case .invalid: return "invalid argument"
        case .denied: return "not DRM master"
        case .other(let text): return text
        }
    }

    private mutating func flip(to buffer: Int, now: Double) -> [Action] {
        flipSerial += 1
        // The watchdog is armed first: a refusal answers the flip at once and disarms it.
        return [.armTimer(at: now + Self.flipTimeout), .flip(buffer: buffer, serial: flipSerial)]
    }

    /// Does what the state asks for once no flip is in flight: the deferred release, rebuild and power off, then
    /// the mode set again for a return, then the waiting content.
    private mutating func settle(now: Double) -> [Action] {
        guard inFlight == nil else { return [] }
        var actions: [Action] = []
        if seat == .releasing {
            seat = .away
            actions.append(.dropMaster)
        }
        guard seat == .ours, connected else { return actions }
        if rebuildPending {
            rebuildPending = false
            return actions + [.rebuildBuffers]
        }
        guard hasBuffers else { return actions }
        guard wantsPower else {
            if !poweredDown {
                poweredDown = true
                actions.append(.powerOff)
            }
            return actions
        }
        if needsModeset {
            if let content = waiting {
                let accepted = waitingAccepted
                waiting = nil
                needsModeset = false
                poweredDown = false
                hasPicture = true
                let target = back
                actions += [.paint(content, buffer: target, front: front), .modeset(buffer: target), .powerOn]
                front = target
                return actions + [accepted ? .reappeared(content) : .completed(content, visible: true)]
            }
            // Nothing of ours to show yet: the first content sets the mode.
            guard hasPicture else {
                if poweredDown {
                    poweredDown = false
                    actions.append(.powerOn)
                }
                return actions
            }
            needsModeset = false
            poweredDown = false
            return actions + [.modeset(buffer: front), .powerOn, .reappeared(nil)]
        }
        guard let content = waiting else { return actions }
        waiting = nil
        let target = back
        inFlight = (content, target)
        return actions + [.paint(content, buffer: target, front: front)] + flip(to: target, now: now)
    }
}
