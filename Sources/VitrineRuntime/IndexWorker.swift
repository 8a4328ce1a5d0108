import VitrineCore

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
    }

    struct Refresh: Sendable {
        var known: [Slide]
        /// Files closed after writing since the last look: their slides count as added (replaced) too.
        var finished: Set<String>
        /// The library folder was replaced: every slide counts as new.
        var treeReplaced: Bool
    }

    enum Result: Sendable {
        case indexed([Slide])
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
    }

    private let monitor = Monitor()
    private let wakeup: Wakeup
    private let library: Library
    private let cacheDirectory: String?
    private var waiting: (serial: Int, job: Job)?
    private var currentSerial: Int?
    private var currentCancelled = false
    private var lastSerial = 0
    private var outcomes: [Outcome] = []
    private var stopping = false
    private var thread: JoinableThread?

    init(library: Library, cacheDirectory: String?, wakeup: Wakeup) {
        self.library = library
        self.cacheDirectory = cacheDirectory
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

    func takeOutcomes() -> [Outcome] {
        monitor.locked {
            defer { outcomes = [] }
            return outcomes
        }
    }

    private func run() {
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
            let outcome = read(job, serial: serial)
            let deliver = monitor.locked {
                defer { currentSerial = nil }
                guard let outcome, !currentCancelled, !stopping else { return false }
                outcomes.append(outcome)
                return true
            }
            if deliver { wakeup.signal() }
        }
    }

    private func read(_ job: Job, serial: Int) -> Outcome? {
        let started = MonotonicClock.seconds()
        let indexer = CategoryIndexer(
            library: library, pairPortraits: job.pairPortraits, cacheDirectory: cacheDirectory,
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
            let changes = Self.changes(from: refresh, to: index.slides)
            result = .changed(added: changes.added, removed: changes.removed)
        } else {
            result = .indexed(index.slides)
        }
        return Outcome(
            serial: serial, job: job, result: result, seconds: MonotonicClock.seconds() - started,
            headersRead: index.headersRead, cacheHits: index.cacheHits, cacheProblem: index.cacheProblem)
    }

    /// What a refresh found: slides that are new or whose files changed (or were written again), and slides gone.
    static func changes(from refresh: Refresh, to current: [Slide]) -> (added: [Slide], removed: [SlideID]) {
        let known = Dictionary(refresh.known.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let currentIDs = Set(current.map(\.id))
        let removed = known.keys.filter { !currentIDs.contains($0) }.sorted { $0.description < $1.description }
        // In a replaced tree every file may be new, whatever its name.
        let added = current.filter { slide in
            guard let old = known[slide.id], !refresh.treeReplaced else { return true }
            return old.files != slide.files || slide.files.contains { refresh.finished.contains($0) }
        }
        return (added, removed)
    }
}
