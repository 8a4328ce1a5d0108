import VitrineCore
import VitrinePlatform

/// Loads the libraries a part needs (`LazyLibrary`) before it starts, and makes what needs files read (the text
/// renderers: FreeType and the font), off the loop thread once the loop runs: a reload that turns MQTT, the web
/// remote or the corner on, or the first banner, would otherwise read a library, the dozen it maps or a font from
/// disk on the loop. Before the loop runs (start-up, which reads the config and the device table too) they are
/// loaded and made where they are asked for.
final class LibraryLoader {
    private let loop: EventLoop
    private let log: EventLog
    private var worker: Worker<Void>?
    private var source: EventLoop.Source?
    /// What waits for the worker, tried on the loop after each job: each runs its continuation and says true once
    /// what it waits for is there, else says false and stays.
    private var waiting: [() -> Bool] = []
    /// The loop runs: from here on, loads go to the worker.
    var loopRunning = false

    init(loop: EventLoop, log: EventLog) {
        self.loop = loop
        self.log = log
    }

    /// Whether `libraries` may be used now: each loaded, or known missing (which the part's own start reports).
    /// When not, they are loaded on the worker and `retry` runs on the loop once they have been tried.
    func ready(_ libraries: [LazyLibrary], orRetry retry: @escaping () -> Void) -> Bool {
        if libraries.allSatisfy(\.hasBeenTried) { return true }
        let load: @Sendable () -> Void = { for library in libraries { try? library.load() } }
        guard loopRunning, submit(load) else {
            load()
            return true
        }
        waiting.append {
            guard libraries.allSatisfy(\.hasBeenTried) else { return false }
            retry()
            return true
        }
        return false
    }

    /// Makes a value that reads files to be made (a `TextRenderer`, a `CornerOverlay`) and hands it, or the error,
    /// to `then` on the loop: at once before the loop runs, else from the worker.
    func make<Value>(
        _ build: @escaping @Sendable () throws(FileError) -> Value,
        then: @escaping (Result<Value, FileError>) -> Void
    ) {
        let made = Made<Value>()
        // Made outside the lock: the loop looks at the result after every job, and must never wait on this one.
        let job: @Sendable () -> Void = {
            let result = Result(catching: build)
            made.result.withLock { $0 = result }
        }
        guard loopRunning, submit(job) else {
            then(Result(catching: build))
            return
        }
        waiting.append {
            guard let result = made.result.withLock({ $0 }) else { return false }
            then(result)
            return true
        }
    }

    /// A value made on the worker, handed to the loop whole: the worker writes it once and no longer touches it.
    private final class Made<Value>: @unchecked Sendable {
        // @unchecked: the value (a FreeType face, not Sendable) is written under the lock on the worker and read
        // under it on the loop after that; nobody uses it on two threads.
        let result = Locked<Result<Value, FileError>?>(nil)
    }

    /// Runs `job` on the worker, started on first use; false when no worker could be started or its queue is full
    /// (the caller then does the work where it is).
    private func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        if worker == nil {
            do {
                // The thread starts with the first job, and a worker dropped here stops with it.
                let worker = try Worker<Void>(.inOrder(limit: 16))
                source = try loop.add(worker.wakeup.descriptor) { [unowned self] _ in deliver() }
                self.worker = worker
            } catch {
                log(.warning, "libraries and fonts loaded where first needed, on the loop: \(error)")
                return false
            }
        }
        return worker?.submit { _ in job() } ?? false
    }

    private func deliver() {
        _ = worker?.take()
        // A continuation may ask for more (a link that starts another): those land in `waiting` as it runs.
        let entries = waiting
        waiting = []
        waiting += entries.filter { !$0() }
    }

    func stop() {
        loop.remove(source)
        source = nil
        worker?.stop()
        waiting = []
    }
}
