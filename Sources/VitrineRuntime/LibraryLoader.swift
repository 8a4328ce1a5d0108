import VitrineCore
import VitrinePlatform

/// Loads the libraries a link needs (`LazyLibrary`) before the link starts, off the loop thread once the loop runs:
/// a reload that turns MQTT or the web remote on would otherwise read the library, and the dozen it maps, from disk
/// on the loop. Before the loop runs (start-up, which reads the config and the device table too) they are loaded
/// where they are asked for.
final class LibraryLoader {
    private let loop: EventLoop
    private let log: EventLog
    private var worker: Worker<Void>?
    private var source: EventLoop.Source?
    /// Starts that wait for their libraries, run on the loop once every one of them has been tried.
    private var waiting: [(libraries: [LazyLibrary], start: () -> Void)] = []
    /// The loop runs: from here on, loads go to the worker.
    var loopRunning = false

    init(loop: EventLoop, log: EventLog) {
        self.loop = loop
        self.log = log
    }

    /// Whether `libraries` may be used now: each loaded, or known missing (which the link's own start reports).
    /// When not, they are loaded on the worker and `retry` runs on the loop once they have been tried.
    func ready(_ libraries: [LazyLibrary], orRetry retry: @escaping () -> Void) -> Bool {
        if libraries.allSatisfy(\.hasBeenTried) { return true }
        if !loopRunning {
            for library in libraries { try? library.load() }
            return true
        }
        if worker == nil {
            do {
                let worker = try Worker<Void>(.inOrder(limit: 16))
                do {
                    source = try loop.add(worker.wakeup.descriptor) { [unowned self] _ in deliver() }
                } catch {
                    // Its thread is running already: end it, or it waits for jobs forever.
                    worker.stop()
                    throw error
                }
                self.worker = worker
            } catch {
                log(.warning, "libraries loaded where first needed, on the loop: \(error)")
                return true
            }
        }
        waiting.append((libraries, retry))
        worker?.submit { _ in
            for library in libraries { try? library.load() }
        }
        return false
    }

    private func deliver() {
        _ = worker?.take()
        let due = waiting.filter { $0.libraries.allSatisfy(\.hasBeenTried) }
        waiting.removeAll { $0.libraries.allSatisfy(\.hasBeenTried) }
        for entry in due { entry.start() }
    }

    func stop() {
        loop.remove(source)
        source = nil
        worker?.stop()
        waiting = []
    }
}
