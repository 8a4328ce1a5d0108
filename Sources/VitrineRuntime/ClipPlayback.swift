import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrinePlatform

/// The clip on screen as the runtime plays it: the stream's pictures, waiting in order, paced onto the display by
/// `ClipPacer` (Core). One at a time; made by `.playClip`, ended by `.clip(.stop)` or the clip's end.
final class ClipPlayback {
    let id: SlideID
    let stream: ClipStream
    var pacer: ClipPacer
    /// Pictures decoded and not shown yet, in order.
    var waiting: [ClipStream.Picture] = []
    /// Frames handed to the display and not completed yet, with their clip times and when they were handed over
    /// (a late picture's log line tells a picture handed late from a vblank the display missed).
    var handed: [ObjectIdentifier: (frame: Frame, time: Double, at: Double)] = [:]
    /// Frames completed without reaching the glass, which the display may still paint on the screen's return: back
    /// to the stream once a later picture has been shown.
    var parked: [Frame] = []
    /// The last picture that reached the glass (a fade out of the clip starts from a copy of it).
    var lastShown: Frame?
    /// The first picture (the slide as presented) is on the glass: pacing may start.
    var posterShown = false
    var started = false
    /// Something holds the show (a pause, the screen off): the clip stays where it is.
    var held: Bool
    var ended = false
    /// The decoder in use, once the stream has opened the clip.
    var decoder: String?
    var header: ClipHeader?
    /// What plays the sound ("aac 44100 Hz on default"), when it plays.
    var sound: String?
    let record: PresentRecord
    /// Whether the board's falling behind has been said (once a clip).
    var saidSlow = false
    /// Pictures decoded before the clip starts: all the stream's pool holds.
    static let preroll = 3
    /// How long the next slides' decodes wait after a clip starts (`ScreenContents.deferPrefetch`): the decoder is
    /// filling its threads and the pool then, with no picture in hand to spare. A photo decoded at that moment on
    /// two busy TCG CPUs made nine pictures late; a second in, the pool is full and the decoder ahead.
    static let settling = 1.0

    /// The clip is starting: not a second in yet, and not held (a held clip decodes nothing).
    func isStarting(now: Double) -> Bool {
        !held && !(started && pacer.position(now: now) >= Self.settling)
    }

    /// The slide's original (the stream may play a rendition of it).
    let original: String?

    init(id: SlideID, stream: ClipStream, refresh: Double?, paused: Bool, record: PresentRecord, original: String?) {
        self.id = id
        self.original = original
        self.stream = stream
        self.record = record
        pacer = ClipPacer(refresh: refresh ?? 0)
        held = paused
    }

    func hold(_ on: Bool, now: Double) {
        guard on != held else { return }
        held = on
        guard started else { return }
        if on { pacer.pause(now: now) } else { pacer.resume(now: now) }
        stream.setClock(anchor: pacer.anchor)
    }

    func start(now: Double, firstTime: Double) {
        started = true
        pacer.start(now: now, firstTime: firstTime)
        stream.setClock(anchor: pacer.anchor)
    }

    /// How the pictures went: the pacer's count, with the pictures the stream passed over as dropped.
    var figures: ClipPacer.Figures {
        var figures = pacer.figures
        figures.dropped += stream.skippedPictures
        return figures
    }

    /// The picture's frames go back to the stream, uncounted.
    func dropWaiting(_ count: Int) {
        for picture in waiting.prefix(count) { stream.recycle(picture.frame) }
        waiting.removeFirst(min(count, waiting.count))
        pacer.dropped(count)
    }
}
