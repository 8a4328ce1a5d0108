/// What was put on screen, for `presented.jsonl` and `--stats`.
public struct PresentRecord: Sendable, Equatable {
    public var category: String
    public var slide: String
    public var file: String?
    public var decodeMilliseconds: Double?
    /// Why the slide was chosen (`SelectionReason`).
    public var why: String?
    /// Each photo's caption as drawn.
    public var captions: [String?]
    /// For a clip's picture after its first: its time in the clip (seconds).
    public var clipTime: Double?

    public init(
        category: String, slide: String, file: String?, decodeMilliseconds: Double?, why: String? = nil,
        captions: [String?] = []
    ) {
        self.captions = captions
        self.category = category
        self.slide = slide
        self.file = file
        self.decodeMilliseconds = decodeMilliseconds
        self.why = why
    }
}

/// What is on the screen, in one value: which picture each scanout buffer holds and where text over it changed it,
/// the slide last handed to the screen (its frame while a fade or a link may still want it), and the crossfade
/// under way with the prefetches that wait for it. The display controller owns it and changes it as it paints and
/// flips; the runtime, the status and the links read it. Nobody keeps a copy (the first release kept four, and
/// its display bugs came from their disagreeing).
///
/// The player's `current` is not a copy: it is where the show is (the slide it handed over last, which a category
/// switch clears at once), not what the glass shows.
///
/// Fades: each completed step asks for the next; the incoming slide's share follows the clock (`Crossfade`), so a
/// blend slower than a frame drops steps and the fade still ends on time, with the new frame itself as the last
/// step. Prefetches wait while a fade runs: the blend gets the CPU, and the outgoing frame is gone before the next
/// one is allocated, so fades cost one frame of memory, not two.
public struct ScreenContents {
    /// A whole picture painted into a buffer.
    public enum Picture: Equatable, Sendable {
        case slide(PresentRecord)
        /// A crossfade step: the incoming slide and its share of 256.
        case blend(PresentRecord, weight: Int)
        case background
    }

    /// What the screen is to show next for a slide (the last step of a fade is the new slide itself).
    public enum Step {
        case slide(Frame, PresentRecord)
        case blend(from: Frame, to: Frame, weight: Int, PresentRecord)
    }

    private struct Fade {
        var crossfade: Crossfade
        let from: Frame
        let to: Frame
        let record: PresentRecord
        /// The last step (the new frame itself) has been handed out.
        var finished = false
    }

    /// Per buffer, the picture it holds; nil when it holds none of ours (new buffers).
    public private(set) var pictures: [Picture?]
    /// Where overlays changed each buffer's picture, so an overlay copies only those places.
    public private(set) var damage: BufferDamage
    /// The slide last handed to the screen (on the glass, or on its way there).
    public private(set) var slide: PresentRecord?
    /// The slide's frame, kept while fades are on: the next fade starts from it.
    private var kept: Frame?
    /// The slide's frame otherwise, for as long as the player keeps it.
    private weak var handed: Frame?
    /// Crossfade length in seconds; nil when slides cut (the setting, the profile, the budget or the display).
    public var fadeSeconds: Double? {
        didSet { if fadeSeconds == nil { kept = nil } }
    }
    private var fade: Fade?
    private var deferred: [DecodeRequest] = []
    /// When the last slide change's first step reached the screen (the change became visible).
    public private(set) var firstShown: Double?
    /// The vblank sequence of the fade's first step on the glass and the steps shown since.
    private var pacing: (first: UInt32, steps: Int)?
    /// The last slide's fade: steps shown and vblanks it took (a paced fade shows one step per vblank).
    public private(set) var lastPacing: (steps: Int, vblanks: Int)?

    public init(bufferCount: Int, fadeSeconds: Double?) {
        pictures = Array(repeating: nil, count: bufferCount)
        damage = BufferDamage(bufferCount: bufferCount)
        self.fadeSeconds = fadeSeconds
    }

    /// The slide's frame, while something keeps it (for a picture of the slide made later).
    public var slideFrame: Frame? { kept ?? handed }
    public var isFading: Bool { fade != nil }
    /// A fade runs and its last step has not been handed out yet.
    public var wantsFadeStep: Bool { fade.map { !$0.finished } ?? false }

    public func picture(in buffer: Int) -> Picture? {
        pictures.indices.contains(buffer) ? pictures[buffer] : nil
    }

    // MARK: Buffers

    /// A whole picture (a slide, a fade step, the background) was painted into `buffer`.
    public mutating func painted(_ picture: Picture, into buffer: Int) {
        guard pictures.indices.contains(buffer) else { return }
        pictures[buffer] = picture
        damage.picturePainted(into: buffer)
    }

    /// Text was painted into `buffer` over a copy of `front`, touching `touched`.
    public mutating func overlayPainted(into buffer: Int, from front: Int, touched: [Placement.Rect]) {
        guard pictures.indices.contains(buffer), pictures.indices.contains(front) else { return }
        pictures[buffer] = pictures[front]
        damage.overlayPainted(into: buffer, from: front, touched: touched)
    }

    /// The buffers' pixels are not what was painted any more (the console drew into them, a blank painted them
    /// black): the next overlay copies the whole picture. Which slide they were painted for is still known.
    public mutating func pixelsLost() { damage.forget() }

    /// New (black) buffers for another mode.
    public mutating func buffersRebuilt(count: Int) {
        pictures = Array(repeating: nil, count: count)
        damage = BufferDamage(bufferCount: count)
    }

    // MARK: Slides and fades

    /// A new slide: the first step of a crossfade from the slide on screen when fades are on and the screen can
    /// show one, else the frame itself (a cut).
    public mutating func present(_ frame: Frame, _ record: PresentRecord, screenCanFade: Bool, now: Double) -> Step {
        firstShown = nil
        let from = kept
        slide = record
        handed = frame
        if fadeSeconds != nil { kept = frame }
        guard let seconds = fadeSeconds, let from, from.size == frame.size, screenCanFade else {
            return .slide(frame, record)
        }
        fade = Fade(crossfade: Crossfade(started: now, duration: seconds), from: from, to: frame, record: record)
        return nextFadeStep(now: now) ?? .slide(frame, record)
    }

    /// The fade's next step (the last one is the new slide itself), while `wantsFadeStep`; `vblanksAhead` is when
    /// it will reach the glass (2 for a step painted while another is flipping).
    public mutating func nextFadeStep(now: Double, vblanksAhead: Int = 1) -> Step? {
        guard var current = fade, !current.finished else { return nil }
        let weight = current.crossfade.nextWeight(at: now, frameTime: Double(vblanksAhead) * Crossfade.frameTime)
        if current.crossfade.isFinished { current.finished = true }
        fade = current
        if current.finished { return .slide(current.to, current.record) }
        return .blend(from: current.from, to: current.to, weight: weight, current.record)
    }

    /// The next step is the last (the viewer asked for another slide, or the screen cannot show steps now).
    public mutating func hurryFade() { fade?.crossfade.finishNow() }

    /// A fade step is done (on the glass when `visible`, at vblank `sequence` where the driver counts them).
    public mutating func fadeStepDone(visible: Bool, sequence: UInt32?, now: Double) {
        if firstShown == nil { firstShown = now }
        if visible, let sequence { pacing = (pacing?.first ?? sequence, (pacing?.steps ?? 0) + 1) }
    }

    /// A slide's frame is done: the fade (if any) is over. Returns the prefetches that waited for it.
    public mutating func slideDone(visible: Bool, sequence: UInt32?) -> [DecodeRequest] {
        lastPacing = nil
        if let pacing, visible, let sequence { lastPacing = (pacing.steps + 1, Int(sequence &- pacing.first)) }
        pacing = nil
        guard fade != nil else { return [] }
        fade = nil
        defer { deferred = [] }
        return deferred
    }

    /// Whether a decode must wait: prefetches do while a fade runs or a clip starts (`clipStarting`: its decoder
    /// fills its threads then, with no picture to spare); a slide the viewer asked for does not.
    public mutating func deferPrefetch(_ request: DecodeRequest, clipStarting: Bool = false) -> Bool {
        deferred.removeAll { $0.slide.id == request.slide.id }
        guard fade != nil || clipStarting, request.purpose == .prefetch else { return false }
        deferred.append(request)
        return true
    }

    /// The prefetches that waited, once no fade runs: the clip that held them is a second in, or has stopped.
    public mutating func releaseDeferred() -> [DecodeRequest] {
        guard fade == nil else { return [] }
        defer { deferred = [] }
        return deferred
    }

    /// A clip ended on this picture: a fade out of the clip starts from it (the slide's first picture is kept till
    /// then).
    public mutating func clipEnded(on frame: Frame) {
        if fadeSeconds != nil { kept = frame }
        handed = frame
    }

    /// A waiting prefetch is not wanted any more.
    public mutating func cancelDeferred(_ id: SlideID) { deferred.removeAll { $0.slide.id == id } }
}
