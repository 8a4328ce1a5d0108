import VitrineCore
import VitrinePlatform

/// Keeps the saved position (`PositionStore`) following the slide on screen without wearing out an SD card:
/// saves are at least `spacing` seconds apart (`positionSaveInterval`, half an hour by default, however fast the show
/// goes), the last one waits on a timer the event loop watches, and the one at exit is never skipped. A crash loses
/// at most that much of the show. Saves are written by a thread of their own (`PositionWriter`): a save fsyncs, and
/// the file may be on a disk that is slow or stalled; the player's thread only hands the position over.
package final class PositionKeeper {
    package var spacing: Double

    let store: PositionStore
    private let timer: MonotonicTimer
    private let library: String
    private let log: EventLog
    private var unsaved: (slide: SlideID, selection: SelectionState?)?
    private var lastSave = -Double.infinity
    private let writer: PositionWriter

    package init(store: PositionStore, library: String, spacing: Double, log: EventLog) throws(RuntimeError) {
        self.store = store
        self.spacing = spacing
        self.library = library
        self.log = log
        timer = try MonotonicTimer()
        writer = try PositionWriter(store: store)
    }

    package var descriptor: Int32 { timer.descriptor }

    /// A slide reached the screen (or was taken for a dark one): saved now, or when the spacing allows.
    package func shown(_ slide: SlideID, selection: SelectionState? = nil, now: Double) {
        unsaved = (slide, selection)
        if now - lastSave >= spacing {
            save()
        } else {
            timer.arm(at: lastSave + spacing)
        }
    }

    package func timerFired() {
        timer.acknowledge()
        save()
    }

    /// Hands the slide on screen to the writer, if it changed since the last save. A failure (a full disk) keeps
    /// the file as it was, is said (once: the log says a warning once) at the next save, and the next slide is
    /// saved again.
    package func save() {
        if let failure = writer.takeFailure() {
            log(.warning, "cannot save the position (\(failure)); the last saved one stays")
        }
        guard let (slide, selection) = unsaved else { return }
        lastSave = MonotonicClock.seconds()
        writer.write(PositionStore.Position(library: library, slide: slide, selection: selection))
        unsaved = nil
    }

    /// At exit, after the loop: the last position written before returning.
    package func saveAndWait() {
        save()
        writer.stop()
        if let failure = writer.takeFailure() {
            log(.warning, "cannot save the position (\(failure)); the last saved one stays")
        }
    }
}

/// Writes positions on a `Worker` of its own, the newest only: a position superseded before it was written is
/// never written.
final class PositionWriter {
    private let store: PositionStore
    private let worker: Worker<FileError?>

    init(store: PositionStore) throws(RuntimeError) {
        self.store = store
        worker = try Worker(.newestOnly)
    }

    func write(_ position: PositionStore.Position) {
        let store = self.store
        worker.submit { _ in
            do throws(FileError) {
                try store.save(position)
                return nil
            } catch {
                return error
            }
        }
    }

    func takeFailure() -> FileError? { worker.take().compactMap { $0 }.last }

    /// Writes what waits, then ends the thread.
    func stop() { worker.finish() }
}
