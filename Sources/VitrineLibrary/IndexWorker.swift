import CLinux
import VitrineCore
import VitrinePlatform

/// The background thread that reads categories (folder listings, headers for `newest` order and portrait pairs),
/// so the player thread never waits on a large or slow library: a `Worker` that keeps the latest job only.
///
/// A new job replaces one still waiting and cancels the one being read (which stops at its next batch of photos and
/// delivers nothing); outcomes already delivered are kept for the loop. The watches a cancelled job placed come back
/// as strays for the watcher to drop. Results are collected by the player thread after the worker rings `wakeup`.
final class IndexWorker {
    struct Job: Sendable {
        var category: LibraryCategory
        var order: PlaybackOrder
        var pairPortraits: Bool
        var minRating: Int? = nil
        /// Files still being written: left out.
        var beingWritten: Set<String>
        /// For a category the show already plays: what it has, so the worker tells what was added and removed.
        var refresh: Refresh?
        /// The library watcher's inotify descriptor: the category's folders are watched with it before they are
        /// listed (so nothing arriving in between is missed), here rather than on the player's thread.
        var watchDescriptor: Int32?
    }

    struct Refresh: Sendable {
        var known: SlideCatalog
        /// Files closed after writing since the last look: their slides count as added (replaced) too.
        var finished: Set<String>
        /// The library folder was replaced: every slide counts as new.
        var treeReplaced: Bool
    }

    enum Result: Sendable {
        case indexed(SlideCatalog)
        case changed(added: [Slide], removed: [SlideID])
        case failed(FileError)
    }

    struct Outcome: Sendable {
        var serial: Int
        var job: Job
        var result: Result
        var seconds: Double
        var headersRead = 0
        var cacheHits = 0
        var cacheProblem: String?
        /// The watches placed for the category, when the job asked for them.
        var watches: [Int32: String]?
    }

    /// What a job gives back: its outcome (nil when it was cancelled mid-read) and the watches it placed.
    private struct Done: Sendable {
        var outcome: Outcome?
        var placed: [Int32: String]?
    }

    private struct Reader: Sendable {
        let library: Library
        let cacheDirectory: String?
        let renditionCache: String?
        let crashGuard: CrashGuard?
    }

    private let worker: Worker<Done>
    private let reader: Reader
    private var lastSerial = 0
    /// Watches placed by jobs that were cancelled, for the watcher to drop (written on the worker's thread).
    private let strays: Locked<[Int32]>
    /// The thread's priority, lowered to `niceness` once the first category is read.
    private let priority = LaterPriority(niceness: IndexWorker.niceness)

    var wakeup: Wakeup { worker.wakeup }

    init(library: Library, cacheDirectory: String?, renditionCache: String? = nil, crashGuard: CrashGuard? = nil)
        throws(RuntimeError)
    {
        reader = Reader(
            library: library, cacheDirectory: cacheDirectory, renditionCache: renditionCache, crashGuard: crashGuard)
        let strays = Locked<[Int32]>([])
        self.strays = strays
        worker = try Worker(.latest) { done in
            strays.withLock { $0 += done.placed.map { Array($0.keys) } ?? [] }
        }
    }

    func stop() { worker.stop() }

    /// Queues `job` in place of any other; returns its serial, which its outcome carries.
    func submit(_ job: Job) -> Int {
        lastSerial += 1
        let serial = lastSerial
        let reader = self.reader
        let priority = self.priority
        worker.submit { isCancelled in
            var placed: [Int32: String]?
            if let descriptor = job.watchDescriptor, !job.category.isRoot {
                placed = LibraryWatcher.placeWatches(descriptor: descriptor, folder: job.category.path)
            }
            var outcome = Self.read(job, serial: serial, reader: reader, isCancelled: isCancelled)
            outcome?.watches = placed
            if outcome != nil, !isCancelled() { priority.lower() }
            return Done(outcome: outcome, placed: placed)
        }
        return serial
    }

    func takeStrays() -> [Int32] {
        strays.withLock { taken in
            defer { taken = [] }
            return taken
        }
    }

    func takeOutcomes() -> [Outcome] { worker.take().compactMap(\.outcome) }

    /// The nice value of the index thread once the show has its first category: reading 100,000 headers then must
    /// not delay a flip on the player's thread. The first index runs at the player's own priority, since nothing is
    /// on screen until it is done (and a thread cannot raise its priority again without privileges).
    static let niceness: Int32 = 10

    private static func read(_ job: Job, serial: Int, reader: Reader, isCancelled: @escaping @Sendable () -> Bool)
        -> Outcome?
    {
        let started = MonotonicClock.seconds()
        let indexer = CategoryIndexer(
            library: reader.library, pairPortraits: job.pairPortraits, cacheDirectory: reader.cacheDirectory,
            renditionCache: reader.renditionCache, crashGuard: reader.crashGuard, isCancelled: isCancelled)
        let index: CategoryIndexer.Index
        do {
            guard
                let read = try indexer.index(
                    of: job.category, order: job.order, minRating: job.minRating, excluding: job.beingWritten)
            else {
                return nil
            }
            index = read
        } catch {
            return Outcome(
                serial: serial, job: job, result: .failed(error), seconds: MonotonicClock.seconds() - started)
        }
        let result: Result
        if let refresh = job.refresh {
            let changes = Self.changes(from: refresh, to: index.catalog)
            result = .changed(added: changes.added, removed: changes.removed)
        } else {
            result = .indexed(index.catalog)
        }
        return Outcome(
            serial: serial, job: job, result: result, seconds: MonotonicClock.seconds() - started,
            headersRead: index.headersRead, cacheHits: index.cacheHits, cacheProblem: index.cacheProblem)
    }

    /// What a refresh found: slides that are new or whose files changed (or were written again), and slides gone.
    static func changes(from refresh: Refresh, to current: SlideCatalog) -> (added: [Slide], removed: [SlideID]) {
        let known = refresh.known
        var added: [Slide] = []
        for index in current.byName {
            // In a replaced tree every file may be new, whatever its name.
            guard !refresh.treeReplaced, let old = known.index(of: current.id(at: index)) else {
                added.append(current.slide(at: index))
                continue
            }
            if !current.sameFiles(index, as: known, old) {
                added.append(current.slide(at: index))
            } else if !refresh.finished.isEmpty {
                let slide = current.slide(at: index)
                if slide.files.contains(where: refresh.finished.contains) { added.append(slide) }
            }
        }
        let removed = known.byName.map { known.id(at: $0) }.filter { current.index(of: $0) == nil }
        return (added, removed.sorted { $0.description < $1.description })
    }
}
