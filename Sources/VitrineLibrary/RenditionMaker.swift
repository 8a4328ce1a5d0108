import CLinux
import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Heals photos the show refused for memory: for each, in the background, it writes the rendition the screen's
/// profile reads (`NAME@WxH.jpg`, as `vitrine renditions` makes) into the rendition cache, in folders mirroring the
/// library's, and the index then joins it to the photo's slide. A library dropped onto a small board by rsync
/// becomes playable with no extra step, and the library itself is never written.
///
/// One photo at a time, on a `Worker` thread at idle CPU and I/O priority, and only while the machine has room: the
/// decode runs outside the player's budget, so a photo waits until `MemAvailable` is at least twice what it needs
/// plus a margin, looked at again every `retrySeconds`. Results are collected by the player thread after `wakeup`.
///
/// A rendition is written only while its disk keeps `DiskFloor` free after it: the cache is usually in the state
/// folder, and renditions must never take the room the position, the stars and the token are saved in.
package final class RenditionMaker: Sendable {
    package struct Job: Sendable, Equatable {
        var original: String
        /// What the decode asked the budget for when it was refused.
        var need: Int

        package init(original: String, need: Int) {
            self.original = original
            self.need = need
        }
    }

    struct Outcome: Sendable {
        var job: Job
        var result: Made
        var seconds: Double
    }

    enum Made: Sendable, Equatable {
        /// The rendition's path.
        case written(String)
        case failed(ImageError)
        /// The cache's disk would keep less than its floor after the rendition (bytes free, and the floor).
        case noRoom(folder: String, free: Int, floor: Int)
    }

    /// Bytes free for an unprivileged user and the size of the file system holding a folder.
    typealias DiskSpace = @Sendable (_ folder: String) -> (free: Int, total: Int)?

    /// What a rendition is made with; the screen's part changes with a replug.
    private struct Making: Sendable {
        let libraryRoot: String
        let cacheRoot: String
        let quality: Int
        let maxMegapixels: Double
        let screen: Locked<(profile: DeviceProfile, fit: Fit?)>
        let diskSpace: DiskSpace
    }

    /// Free memory kept beside twice the photo's need before a rendition is made.
    static let margin = 64 << 20
    /// How often a photo waiting for room looks again.
    let retrySeconds: Double

    private let worker: Worker<Outcome>
    private let making: Making
    /// Every photo ever queued: each is tried once per run of the player.
    private let seen = Locked<Set<String>>([])

    /// Rung when outcomes are ready.
    var wakeup: Wakeup { worker.wakeup }

    init(
        libraryRoot: String, cacheRoot: String, profile: DeviceProfile, fit: Fit?, maxMegapixels: Double,
        quality: Int = 90, retrySeconds: Double = 30,
        availableBytes: @escaping @Sendable () -> Int = { ProcessMemory.availableBytes() },
        diskSpace: @escaping DiskSpace = { try? FileSystemSpace.of($0) }
    ) throws(RuntimeError) {
        self.retrySeconds = retrySeconds
        making = Making(
            libraryRoot: libraryRoot, cacheRoot: cacheRoot, quality: quality, maxMegapixels: maxMegapixels,
            screen: Locked((profile, fit)), diskSpace: diskSpace)
        // A job's label carries what the photo needs (its variant): it runs once the machine has room for it.
        worker = try Worker(
            .whenReady(retrySeconds: retrySeconds) { label in
                let need = label?.variant ?? 0
                return availableBytes() >= Int.saturatingSum(need.saturatingTimes(2), Self.margin)
            })
    }

    func stop() { worker.stop() }

    /// The screen changed (a replug at another size): renditions from now on are for its profile.
    package func setProfile(_ newProfile: DeviceProfile, fit newFit: Fit?) {
        making.screen.withLock { $0 = (newProfile, newFit) }
    }

    /// Whether a photo of this upright size gets a rendition smaller than itself for the screen.
    package func wouldShrink(_ upright: Size) -> Bool {
        let (profile, fit) = making.screen.withLock { $0 }
        return !RenditionPlan.targets(upright: upright, profiles: [profile], fit: fit).isEmpty
    }

    /// Queues a photo; false when it was queued before (it is tried once per run).
    @discardableResult
    package func submit(_ job: Job) -> Bool {
        guard seen.withLock({ $0.insert(job.original).inserted }) else { return false }
        let making = self.making
        return worker.submit(.init(key: job.original, variant: job.need)) { _ in
            // Refused (a container without SCHED_IDLE), the job runs at normal priority; it still waits for room.
            _ = vitrine_make_thread_idle()
            let started = MonotonicClock.seconds()
            let (profile, fit) = making.screen.withLock { $0 }
            let result = Self.make(job, profile: profile, fit: fit, making: making)
            return Outcome(job: job, result: result, seconds: MonotonicClock.seconds() - started)
        }
    }

    func takeOutcomes() -> [Outcome] { worker.take() }

    /// How many photos wait for room or their turn.
    var waiting: Int { worker.waitingCount }

    private static func make(_ job: Job, profile: DeviceProfile, fit: Fit?, making: Making) -> Made {
        let libraryRoot = making.libraryRoot
        let cacheRoot = making.cacheRoot
        let quality = making.quality
        let maxMegapixels = making.maxMegapixels
        // The decode is charged to a budget of its own: the machine's free memory, not the player's.
        let writer = RenditionWriter(budget: MemoryBudget(limit: 2 * job.need + Self.margin))
        do {
            let header = try writer.header(of: job.original)
            guard
                let target = RenditionPlan.targets(upright: header.displayedSize, profiles: [profile], fit: fit).first
            else {
                return .failed(
                    ImageError(
                        file: job.original,
                        reason: .unsupported("no rendition is smaller than the photo for \(profile.rendition)")))
            }
            let folder = PathText.directory(of: job.original)
            guard folder == libraryRoot || folder.hasPrefix(libraryRoot + "/") else {
                return .failed(ImageError(file: job.original, reason: .unsupported("not in the library")))
            }
            let mirror = cacheRoot + String(folder.dropFirst(libraryRoot.count))
            // Asked where the cache will be, before any folder of it is made there.
            var existing = mirror
            while !FileBytes.exists(existing), existing.count > 1 { existing = PathText.directory(of: existing) }
            if let space = making.diskSpace(existing) {
                let floor = DiskFloor.bytes(total: space.total)
                if space.free < DiskFloor.bound(target.size).saturatingPlus(floor) {
                    return .noRoom(folder: cacheRoot, free: space.free, floor: floor)
                }
            }
            do {
                try FileBytes.createDirectories(mirror)
            } catch {
                return .failed(ImageError(file: mirror, reason: .cannotWrite(error)))
            }
            let name = job.original.split(separator: "/").last.map(String.init) ?? job.original
            let destination = "\(mirror)/\(RenditionPlan.fileName(original: name, size: target.size))"
            try writer.write(
                original: job.original, header: header, size: target.size, to: destination, quality: quality,
                maxMegapixels: maxMegapixels)
            return .written(destination)
        } catch {
            return .failed(error)
        }
    }
}
