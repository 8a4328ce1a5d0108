import CLinux
import VitrineCore
import VitrinePlatform

/// The background thread that reads categories (folder listings, headers for `newest` order and portrait pairs),
/// so the player thread never waits on a large or slow library.
///
/// One job at a time: a new job replaces one still waiting and cancels the one being read (which stops at its next
/// batch of photos and delivers nothing). Results are collected by the player thread after the worker rings
/// `wakeup`.
final class IndexWorker: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `monitor`.
    struct Job: Sendable {
        var category: LibraryCategory
        var order: PlaybackOrder
        var pairPortraits: Bool
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

    private let monitor = Monitor()
    private let wakeup: Wakeup
    private let library: Library
    private let cacheDirectory: String?
    private let renditionCache: String?
    private let crashGuard: CrashGuard?
    private var waiting: (serial: Int, job: Job)?
    private var currentSerial: Int?
    private var currentCancelled = false
    private var lastSerial = 0
    private var outcomes: [Outcome] = []
    /// Watches placed by jobs that were cancelled, for the watcher to drop.
    private var strays: [Int32] = []
    private var stopping = false
    private var thread: JoinableThread?

    init(
        library: Library, cacheDirectory: String?, renditionCache: String? = nil, crashGuard: CrashGuard? = nil,
        wakeup: Wakeup
    ) {
        self.library = library
        self.crashGuard = crashGuard
        self.cacheDirectory = cacheDirectory
        self.renditionCache = renditionCache
        self.wakeup = wakeup
    }

    func start() {
        thread = JoinableThread { [self] in run() }
    }

    func stop() {
        monitor.locked {
            stopping = true
            waiting = nil
            monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }

    /// Queues `job` in place of any other; returns its serial, which its outcome carries.
    func submit(_ job: Job) -> Int {
        monitor.locked {
            lastSerial += 1
            waiting = (lastSerial, job)
            if currentSerial != nil { currentCancelled = true }
            monitor.broadcast()
            return lastSerial
        }
    }

    func takeStrays() -> [Int32] {
        monitor.locked {
            defer { strays = [] }
            return strays
        }
    }

    func takeOutcomes() -> [Outcome] {
        monitor.locked {
            defer { outcomes = [] }
            return outcomes
        }
    }

    /// The nice value of the index thread once the show has its first category: reading 100,000 headers then must
    /// not delay a flip on the player's thread. The first index runs at the player's own priority, since nothing is
    /// on screen until it is done (and a thread cannot raise its priority again without privileges).
    static let niceness: Int32 = 10

    private func run() {
        var lowered = false
        while true {
            let next: (serial: Int, job: Job)? = monitor.locked {
                while waiting == nil && !stopping { monitor.wait() }
                guard !stopping, let job = waiting else { return nil }
                waiting = nil
                currentSerial = job.serial
                currentCancelled = false
                return job
            }
            guard let (serial, job) = next else { return }
            var placed: [Int32: String]?
            if let descriptor = job.watchDescriptor, !job.category.isRoot {
                placed = LibraryWatcher.placeWatches(descriptor: descriptor, folder: job.category.path)
            }
            var outcome = read(job, serial: serial)
            outcome?.watches = placed
            let deliver = monitor.locked {
                defer { currentSerial = nil }
                guard let outcome, !currentCancelled, !stopping else {
                    strays += placed.map { Array($0.keys) } ?? []
                    return false
                }
                outcomes.append(outcome)
                return true
            }
            if deliver { wakeup.signal() }
            if deliver && !lowered {
                lowered = true
                _ = vitrine_lower_thread_priority(Self.niceness)
            }
        }
    }

    private func read(_ job: Job, serial: Int) -> Outcome? {
        let started = MonotonicClock.seconds()
        let indexer = CategoryIndexer(
            library: library, pairPortraits: job.pairPortraits, cacheDirectory: cacheDirectory,
            renditionCache: renditionCache, crashGuard: crashGuard,
            isCancelled: { [monitor, unowned self] in monitor.locked { currentCancelled || stopping } })
        let index: CategoryIndexer.Index
        do {
            guard let read = try indexer.index(of: job.category, order: job.order, excluding: job.beingWritten) else {
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
