import VitrineCore

/// Keeps the saved position (`PositionStore`) following the slide on screen without wearing out an SD card:
/// saves are at least `spacing` seconds apart (`positionSaveInterval`, a minute by default, however fast the show
/// goes), the last one waits on a timer the event loop watches, and the one at exit is never skipped. A crash loses
/// at most that much of the show.
final class PositionKeeper {
    var spacing: Double

    let store: PositionStore
    private let timer: MonotonicTimer
    private let library: String
    private let log: EventLog
    private var unsaved: SlideID?
    private var lastSave = -Double.infinity

    init(store: PositionStore, library: String, spacing: Double, log: EventLog) throws(RuntimeError) {
        self.store = store
        self.spacing = spacing
        self.library = library
        self.log = log
        timer = try MonotonicTimer()
    }

    var descriptor: Int32 { timer.descriptor }

    /// A slide reached the screen (or was taken for a dark one): saved now, or when the spacing allows.
    func shown(_ slide: SlideID, now: Double) {
        unsaved = slide
        if now - lastSave >= spacing {
            save()
        } else {
            timer.arm(at: lastSave + spacing)
        }
    }

    func timerFired() {
        timer.acknowledge()
        save()
    }

    /// Saves the slide on screen, if it changed since the last save. A failure (a full disk) keeps the file as it
    /// was, says so once, and is tried again with the next slide.
    func save() {
        guard let slide = unsaved else { return }
        lastSave = MonotonicClock.seconds()
        do {
            try store.save(PositionStore.Position(library: library, slide: slide))
            unsaved = nil
        } catch {
            log(.warning, "cannot save the position (\(error)); the last saved one stays")
        }
    }
}
