import VitrineCore
import VitrineImage

/// The crossfade between the slide on screen and the next, on the loop thread: which content each flip shows,
/// the frame kept for the next fade, the prefetches that wait while a fade runs, and how the fade was paced.
///
/// Each completed step asks for the next; the incoming slide's share follows the clock (`Crossfade`), so a blend
/// slower than a frame drops steps and the fade still ends on time, with the new frame itself as the last step.
/// Prefetches wait while a fade runs: the blend gets the CPU, and the outgoing frame is gone before the next one
/// is allocated, so fades cost one frame of memory, not two.
package final class Crossfader {
    /// Crossfade length in seconds; nil when slides cut (the setting, the profile, the budget or the display).
    package var seconds: Double? {
        didSet { if seconds == nil { onScreen = nil } }
    }
    /// The frame on screen, kept while fades are on: the next fade starts from it.
    private var onScreen: Frame?
    private var fade: (crossfade: Crossfade, from: Frame, to: Frame, record: PresentRecord)?
    private var deferred: [DecodeRequest] = []
    /// The fade's last step (the new frame itself) has been handed out.
    private var finished = false
    /// When the fade's first step reached the screen (the slide change became visible).
    package private(set) var firstShown: Double?
    /// The vblank sequence of the fade's first step on the glass and the steps shown since.
    private var pacing: (first: UInt32, steps: Int)?
    /// The last slide's fade: steps shown and vblanks it took (a paced fade shows one step per vblank).
    package private(set) var lastPacing: (steps: Int, vblanks: Int)?

    package init(seconds: Double?) {
        self.seconds = seconds
    }

    package var isFading: Bool { fade != nil }
    /// A fade runs and its last step has not been handed out yet.
    package var wantsStep: Bool { fade != nil && !finished }

    /// A new slide: the first step of a crossfade from the frame on screen when fades are on and the screen can
    /// show one, else the frame itself (a cut).
    package func present(_ frame: Frame, _ record: PresentRecord, screenCanFade: Bool, now: Double) -> DisplayContent {
        firstShown = nil
        defer { if seconds != nil { onScreen = frame } }
        guard let seconds, let from = onScreen, from.size == frame.size, screenCanFade else {
            return .frame(frame, record)
        }
        fade = (Crossfade(started: now, duration: seconds), from, frame, record)
        finished = false
        return nextStep(now: now) ?? .frame(frame, record)
    }

    /// A step is done (the next comes from `nextStep`).
    package func stepDone(visible: Bool, sequence: UInt32?, now: Double) {
        if firstShown == nil { firstShown = now }
        if visible, let sequence { pacing = (pacing?.first ?? sequence, (pacing?.steps ?? 0) + 1) }
    }

    /// The next step is the last (the viewer asked for another slide, or the screen cannot show steps now).
    package func hurry() { fade?.crossfade.finishNow() }

    /// A slide's frame is done: the fade (if any) is over. Returns the prefetches that waited for it.
    package func frameDone(visible: Bool, sequence: UInt32?) -> [DecodeRequest] {
        lastPacing = nil
        if let pacing, visible, let sequence { lastPacing = (pacing.steps + 1, Int(sequence &- pacing.first)) }
        pacing = nil
        guard fade != nil else { return [] }
        fade = nil
        defer { deferred = [] }
        return deferred
    }

    /// Whether a decode must wait for the fade to end (prefetches do; a slide the viewer asked for does not).
    package func deferIfFading(_ request: DecodeRequest) -> Bool {
        deferred.removeAll { $0.slide.id == request.slide.id }
        guard fade != nil && request.purpose == .prefetch else { return false }
        deferred.append(request)
        return true
    }

    package func cancel(_ id: SlideID) { deferred.removeAll { $0.slide.id == id } }

    /// The fade's next step (the last one is the new slide itself), while `wantsStep`; `vblanksAhead` is when it
    /// will reach the glass (2 for a step painted while another is flipping).
    package func nextStep(now: Double, vblanksAhead: Int = 1) -> DisplayContent? {
        guard var current = fade, !finished else { return nil }
        let weight = current.crossfade.nextWeight(at: now, frameTime: Double(vblanksAhead) * Crossfade.frameTime)
        fade = current
        if current.crossfade.isFinished {
            finished = true
            return .frame(current.to, current.record)
        }
        return .blend(from: current.from, to: current.to, weight: weight, current.record)
    }
}
