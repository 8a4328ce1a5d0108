import VitrineCore
import VitrineImage
import VitrinePlatform

/// The library side of the player's thread: the category list, the index worker, inotify, a library folder that is
/// not there (waited for), a network share (read again on a timer) and photos refused for memory (healed by
/// background renditions). Each entry point is given what the show plays and returns what it found, as events for
/// the show; it keeps no copy of the show and calls nobody back. Every method runs on the player's thread.
package final class LibraryFollower {
    /// What the follower needs to know of the show.
    package struct Show {
        package var active: String?
        package var playlist: Playlist?
        package var order: PlaybackOrder
        package var pairPortraits: Bool
        package var minRating: Int?

        package init(
            active: String?, playlist: Playlist?, order: PlaybackOrder, pairPortraits: Bool, minRating: Int? = nil
        ) {
            self.active = active
            self.playlist = playlist
            self.order = order
            self.pairPortraits = pairPortraits
            self.minRating = minRating
        }
    }

    /// The descriptors the player's loop waits on for the follower.
    private enum Source {
        case watcher, rescan, libraryCheck, indexes, renditions, settle, categories
    }

    /// How often a missing library folder is looked for: a mount (USB stick, NAS) brings no inotify event.
    static let missingLibraryCheckSeconds = 2.0

    let library: Library
    let watcher: LibraryWatcher
    private let log: EventLog
    /// What the show plays, during one entry point's call (given by the caller, dropped at the end of it).
    private var current: Show?
    /// What was found during one entry point's call, returned at its end.
    private var outbox: [Player.Event] = []
    /// Seconds between reads of a library on a network or FUSE filesystem (reloadable).
    package var rescanInterval: Double
    private(set) var categoryList: [LibraryCategory] = []
    /// The library folder is missing and looked for on a timer.
    private var waitingForLibrary = false
    /// Looks for the library folder while it is missing.
    private let libraryCheckTimer: MonotonicTimer
    /// Reads a library on a network or FUSE filesystem again now and then (no inotify events come for changes
    /// made elsewhere); armed only while the library is on one.
    private let rescanTimer: MonotonicTimer
    /// Releases names that appeared without being opened (links) once they have settled.
    private let settleTimer: MonotonicTimer
    private var remoteKind: String?
    /// Reads the category list off the player's thread (after the first, at start).
    private let lister: CategoryLister
    /// Reads categories off the player's thread: a 100,000-photo folder takes seconds to list, date and sort.
    private let indexer: IndexWorker
    /// The serial of the index job whose outcome the show waits for; nil when none is out.
    private var awaitedIndex: Int?
    /// Changes to the active category seen while an index job was out: read once it is back.
    private var changesWaiting: LibraryWatcher.Changes?
    private var sources: LoopSources?
    /// Whether the rendition cache's disk was said to be at its floor this run: said in full once, then a line a
    /// photo.
    private var saidCacheFull = false
    /// Makes renditions of photos refused for memory (nil without a rendition cache).
    package let renditionMaker: RenditionMaker?

    package init(settings: Settings, profile: DeviceProfile, log: EventLog, crashGuard: CrashGuard? = nil)
        throws(RuntimeError)
    {
        library = Library(root: settings.library)
        self.log = log
        rescanInterval = settings.rescanInterval
        watcher = try LibraryWatcher(root: settings.library)
        libraryCheckTimer = try MonotonicTimer()
        rescanTimer = try MonotonicTimer()
        settleTimer = try MonotonicTimer()
        lister = try CategoryLister(library: library, watchDescriptor: watcher.descriptor)
        let renditionCache = StateDirectory.renditionCacheFolder(settings: settings)
        indexer = try IndexWorker(
            library: library, cacheDirectory: StateDirectory.headerCacheFolder(settings: settings),
            renditionCache: renditionCache, crashGuard: crashGuard)
        if let renditionCache {
            renditionMaker = try RenditionMaker(
                libraryRoot: library.root, cacheRoot: renditionCache, profile: profile, fit: settings.fit,
                maxMegapixels: settings.maxMegapixels)
        } else {
            renditionMaker = nil
        }
    }

    private func send(_ event: Player.Event) { outbox.append(event) }

    private func show() -> Show {
        current ?? Show(active: nil, playlist: nil, order: .name, pairPortraits: false)
    }

    /// Runs one entry point with `show` at hand; what it found.
    private func serving(_ show: Show, _ work: () -> Void) -> [Player.Event] {
        current = show
        work()
        current = nil
        defer { outbox = [] }
        return outbox
    }

    /// Watches the follower's descriptors in `loop`: each wake-up gets what the show plays from `show` and gives
    /// what it found to `found`.
    package func register(
        in loop: EventLoop, show: @escaping () -> Show, found: @escaping ([Player.Event]) -> Void
    ) throws(RuntimeError) {
        var sources = LoopSources(loop)
        for (descriptor, source) in descriptors {
            try sources.add(descriptor) { [unowned self] _ in
                found(handle(source, show: show(), now: MonotonicClock.seconds()))
            }
        }
        self.sources = sources
    }

    private var descriptors: [(descriptor: Int32, source: Source)] {
        [
            (watcher.descriptor, .watcher), (rescanTimer.descriptor, .rescan),
            (libraryCheckTimer.descriptor, .libraryCheck), (indexer.wakeup.descriptor, .indexes),
            (settleTimer.descriptor, .settle), (lister.wakeup.descriptor, .categories),
        ] + (renditionMaker.map { [($0.wakeup.descriptor, .renditions)] } ?? [])
    }

    /// Starts the workers and says how the library is (missing, or on a share); returns the category names.
    package func start(now: Double) -> [String] {
        if watcher.rootMissing {
            waitForLibrary(now: now)
        } else {
            noticeRemote(RemoteFilesystem.kind(of: library.root), now: now)
        }
        return readCategories()
    }

    package func stop() {
        sources?.removeAll()
        sources = nil
        lister.stop()
        indexer.stop()
        renditionMaker?.stop()
    }

    private func handle(_ source: Source, show: Show, now: Double) -> [Player.Event] {
        serving(show) { handle(source, now: now) }
    }

    private func handle(_ source: Source, now: Double) {
        switch source {
        case .indexes:
            for outcome in indexer.takeOutcomes() { indexed(outcome, now: now) }
        case .renditions:
            for outcome in renditionMaker?.takeOutcomes() ?? [] { renditionMade(outcome) }
        case .categories:
            guard let (outcome, followed) = lister.take() else { return }
            // The root's follows first: the list was read after them, and says what is at the library's path.
            var changes = LibraryWatcher.Changes()
            for each in followed {
                let found = watcher.rootFollowed(each)
                changes.rootReplaced = changes.rootReplaced || found.rootReplaced
            }
            let before = categoryList.map(\.name)
            let after = takeCategories(outcome.result)
            if before != after { send(.categoriesChanged(after, now: now)) }
            if !watcher.rootMissing { noticeRemote(outcome.remoteKind, now: now) }
            if changes.rootReplaced { libraryChanged(changes, now: now) }
            libraryPresence(now: now)
            refreshIfWaiting()
        case .settle:
            settleTimer.acknowledge()
            libraryChanged(watcher.settle(now: now), now: now)
            if let due = watcher.nextSettle { settleTimer.arm(at: due) }
        case .watcher:
            libraryChanged(watcher.read(now: now), now: now)
            if let due = watcher.nextSettle { settleTimer.arm(at: due) }
            followRootIfWanted()
        case .rescan:
            rescanTimer.acknowledge()
            guard remoteKind != nil, !watcher.rootMissing else { return }
            var changes = LibraryWatcher.Changes()
            changes.categoriesChanged = true
            changes.activeChanged = true
            libraryChanged(changes, now: now)
            rescanTimer.arm(at: now + rescanInterval)
        case .libraryCheck:
            libraryCheckTimer.acknowledge()
            guard watcher.rootMissing else { return }
            // Looked for on the lister's thread (a path lookup); what it finds comes with the category list.
            watcher.lookForRoot()
            followRootIfWanted()
            libraryCheckTimer.arm(at: now + Self.missingLibraryCheckSeconds)
        }
    }

    /// The watcher asked for its root watch to be pointed again at the library's path: the lister does it.
    private func followRootIfWanted() {
        let wanted = watcher.takeFollowsWanted()
        if !wanted.isEmpty { lister.follow(wanted) }
    }

    /// The library went missing (the root's follow found nothing there) or is there again.
    private func libraryPresence(now: Double) {
        if watcher.rootMissing && !waitingForLibrary {
            waitForLibrary(now: now)
        } else if waitingForLibrary && !watcher.rootMissing {
            waitingForLibrary = false
            libraryCheckTimer.disarm()
            log(.notice, "the library \(library.root) is there now")
        }
    }

    /// The category list read on this thread: only at start, before the loop turns.
    func readCategories() -> [String] {
        takeCategories(Result { () throws(FileError) in try library.categories() })
    }

    /// Takes a category list as read (here or by the lister); returns the names.
    private func takeCategories(_ result: Result<[LibraryCategory], FileError>) -> [String] {
        switch result {
        case .success(let list): categoryList = list
        case .failure(let error):
            // A missing library has said so once already, and is waited for.
            if !watcher.rootMissing { log(.error, "\(error)") }
            categoryList = []
        }
        return categoryList.map(\.name)
    }

    /// Asks the index worker for a category the show switches to; an index still out for another is cancelled.
    package func index(_ name: String, show: Show) -> [Player.Event] {
        serving(show) { index(name) }
    }

    private func index(_ name: String) {
        let now = MonotonicClock.seconds()
        guard let category = categoryList.first(where: { $0.name == name }) else {
            awaitedIndex = nil
            send(.indexFailed(category: name, message: "no such category", now: now))
            return
        }
        watcher.watch(category)
        // The new listing sees every change made before it starts.
        changesWaiting = nil
        let show = self.show()
        awaitedIndex = indexer.submit(
            IndexWorker.Job(
                category: category, order: show.order, pairPortraits: show.pairPortraits, minRating: show.minRating,
                beingWritten: watcher.beingWritten, watchDescriptor: watcher.descriptor))
    }

    /// An index job is back: a category to play, or what changed in the one playing.
    private func indexed(_ outcome: IndexWorker.Outcome, now: Double) {
        watcher.dropStrays(indexer.takeStrays())
        guard outcome.serial == awaitedIndex else {
            if let watches = outcome.watches { _ = watcher.adopt(watches, for: outcome.job.category, now: now) }
            return
        }
        awaitedIndex = nil
        if let watches = outcome.watches {
            let meanwhile = watcher.adopt(watches, for: outcome.job.category, now: now)
            if meanwhile != LibraryWatcher.Changes() {
                var waiting = changesWaiting ?? LibraryWatcher.Changes()
                waiting.activeChanged = waiting.activeChanged || meanwhile.activeChanged
                waiting.finished.formUnion(meanwhile.finished)
                changesWaiting = waiting
            }
        }
        if let problem = outcome.cacheProblem { log(.warning, problem) }
        let name = outcome.job.category.name
        switch outcome.result {
        case .indexed(let catalog):
            let cache =
                outcome.headersRead + outcome.cacheHits > 0
                ? ", \(outcome.headersRead) headers read, \(outcome.cacheHits) from the cache" : ""
            log(
                "indexed \(Player.label(name)): \(catalog.count) slides in "
                    + "\(JSONText.number((outcome.seconds * 1000).rounded())) ms\(cache)")
            send(.indexed(category: name, catalog: catalog, now: now))
        case .changed(let added, let removed):
            // New photos first: when everything is replaced at once, the show goes from the old photo to a new one
            // instead of through an empty category (a black frame).
            if !added.isEmpty { send(.photosAdded(added, category: name, now: now)) }
            if !removed.isEmpty { send(.photosRemoved(removed, category: name, now: now)) }
        case .failed(let error):
            if outcome.job.refresh == nil {
                send(.indexFailed(category: name, message: "\(error)", now: now))
            } else {
                log(.error, "\(error)")
            }
        }
        refreshIfWaiting()
    }

    /// Sends the changes seen to the active category to the index worker, when no job is out and the show has the
    /// category's playlist to compare with.
    private func refreshIfWaiting() {
        // After the category list the changes asked for: the category playing may be gone.
        guard awaitedIndex == nil, !lister.isBusy, let changes = changesWaiting else { return }
        let show = self.show()
        guard let active = show.active, let category = categoryList.first(where: { $0.name == active }),
            let playlist = show.playlist
        else { return }
        changesWaiting = nil
        awaitedIndex = indexer.submit(
            IndexWorker.Job(
                category: category, order: show.order, pairPortraits: show.pairPortraits, minRating: show.minRating,
                beingWritten: watcher.beingWritten,
                refresh: IndexWorker.Refresh(
                    known: playlist.catalog, finished: changes.finished, treeReplaced: changes.rootReplaced),
                watchDescriptor: watcher.descriptor))
    }

    /// A photo (not a rendition) refused for the memory budget gets its rendition made in the background; the
    /// category is read again with it when it is written.
    package func healIfRefusedForMemory(_ error: ImageError, slide: Slide) {
        // A clip's still would fit as a rendition, but its pictures would not: it stays skipped.
        guard let renditionMaker, case .overBudget(let exceeded) = error.reason, !slide.isClip,
            slide.photos.contains(where: { $0.original == error.file }),
            renditionMaker.submit(RenditionMaker.Job(original: error.file, need: exceeded.requested))
        else { return }
        log(
            .notice,
            "\(error.file): a rendition for this screen will be made in the background when the board has room "
                + "(\(MemoryBudget.format(2 * exceeded.requested + RenditionMaker.margin)) free), then it plays")
    }

    private func renditionMade(_ outcome: RenditionMaker.Outcome) {
        let seconds = JSONText.number((outcome.seconds * 10).rounded() / 10)
        switch outcome.result {
        case .written(let rendition):
            log("\(outcome.job.original): wrote \(rendition) in \(seconds) s; the show reads it from now on")
            // The cache is not watched: the category playing is read again with the new rendition in it.
            var changes = LibraryWatcher.Changes()
            changes.activeChanged = true
            changes.finished = [rendition]
            libraryChanged(changes, now: MonotonicClock.seconds())
        case .failed(let error):
            log(.warning, "cannot make a rendition of \(outcome.job.original): \(error)")
        case .noRoom(let folder, let free, let floor):
            guard !saidCacheFull else {
                log(.info, "\(outcome.job.original): no rendition, as the rendition cache's disk is at its floor")
                return
            }
            saidCacheFull = true
            log(
                .warning,
                "renditions: the disk of \(folder) has \(MemoryBudget.format(free)) free and keeps "
                    + "\(MemoryBudget.format(floor)) for the position, the stars and the token, so photos too large for "
                    + "the memory budget get no rendition and are skipped until the player restarts with room there "
                    + "(make renditions ahead with `vitrine renditions`, or set renditionCacheFolder on a larger "
                    + "disk); the first is \(outcome.job.original)")
        }
    }

    /// A library on a network or FUSE filesystem is read again every `rescanInterval` seconds.
    private func noticeRemote(_ kind: String?, now: Double) {
        if kind != remoteKind, let kind {
            log(
                .notice,
                "the library \(library.root) is on \(kind): changes made elsewhere send no notice, so it is read "
                    + "again every \(ConfigObject.format(rescanInterval)) s (rescanInterval)")
            rescanTimer.arm(at: now + rescanInterval)
        }
        remoteKind = kind
        if kind == nil { rescanTimer.disarm() }
    }

    /// The library folder is missing (at start, or it went: a USB stick pulled): the show waits on what it has and
    /// the folder is looked for every few seconds.
    private func waitForLibrary(now: Double) {
        waitingForLibrary = true
        log(.notice, "the library \(library.root) is not there; waiting for it to appear (a mount, a new folder)")
        libraryCheckTimer.arm(at: now + Self.missingLibraryCheckSeconds)
    }

    /// The player itself changed the library (the web remote), and `placed` is a photo it put there, complete.
    /// The watcher's events for it are queued already (they came before the job's answer): read first, so no
    /// index in between holds the photo back as one being written.
    package func placed(_ placed: String?, show: Show, now: Double) -> [Player.Event] {
        serving(show) { self.placed(placed, now: now) }
    }

    private func placed(_ placed: String?, now: Double) {
        var changes = watcher.read(now: now)
        if let placed { changes.finished.formUnion(watcher.completed(placed).finished) }
        changes.categoriesChanged = true
        changes.activeChanged = true
        libraryChanged(changes, now: now)
    }

    func libraryChanged(_ changes: LibraryWatcher.Changes, now: Double) {
        let rescan = changes.overflowed || changes.rootReplaced
        if changes.rootReplaced && !changes.overflowed && !waitingForLibrary {
            log("the library folder \(library.root) was replaced; reading it again")
        }
        // A photo arriving in the root changes the category list only when it is the root's first.
        let rootListed = categoryList.first?.isRoot == true
        if changes.categoriesChanged || rescan || changes.rootPhotoWent || (changes.rootPhotoArrived && !rootListed) {
            // Read on the lister's thread; the list changes (and the show hears of it) when it is back.
            lister.ask()
        }
        guard changes.activeChanged || rescan, let active = show().active,
            let category = categoryList.first(where: { $0.name == active })
        else { return }
        // The old watches follow the old folders wherever they went: the refresh places them anew.
        if changes.rootReplaced { watcher.watch(category) }
        var waiting = changesWaiting ?? LibraryWatcher.Changes()
        waiting.activeChanged = true
        waiting.finished.formUnion(changes.finished)
        waiting.rootReplaced = waiting.rootReplaced || changes.rootReplaced
        changesWaiting = waiting
        refreshIfWaiting()
    }
}
