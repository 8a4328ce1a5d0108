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
/// One photo at a time, on a thread at idle CPU and I/O priority, and only while the machine has room: the decode
/// runs outside the player's budget, so it waits until `MemAvailable` is at least twice what the photo needs plus
/// a margin, and looks again every `retrySeconds`. Results are collected by the player thread after `wakeup`.
package final class RenditionMaker: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `monitor`.
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
        /// The rendition written, or why none was.
        var result: Result<String, ImageError>
        var seconds: Double
    }

    /// Free memory kept beside twice the photo's need before a rendition is made.
    static let margin = 64 << 20
    /// How often a photo waiting for room looks again.
    let retrySeconds: Double

    private let monitor = Monitor()
    private let wakeup: Wakeup
    private let libraryRoot: String
    private let cacheRoot: String
    private let availableBytes: @Sendable () -> Int
    private var profile: DeviceProfile
    private var fit: Fit?
    private let quality: Int
    private let maxMegapixels: Double
    private var queue: [Job] = []
    /// Every photo ever queued: each is tried once per run of the player.
    private var seen: Set<String> = []
    private var outcomes: [Outcome] = []
    private var stopping = false
    private var thread: JoinableThread?

    init(
        libraryRoot: String, cacheRoot: String, profile: DeviceProfile, fit: Fit?, maxMegapixels: Double,
        quality: Int = 90, wakeup: Wakeup, retrySeconds: Double = 30,
        availableBytes: @escaping @Sendable () -> Int = { ProcessMemory.availableBytes() }
    ) {
        self.libraryRoot = libraryRoot
        self.cacheRoot = cacheRoot
        self.retrySeconds = retrySeconds
        self.profile = profile
        self.fit = fit
        self.maxMegapixels = maxMegapixels
        self.quality = quality
        self.wakeup = wakeup
        self.availableBytes = availableBytes
    }

    func start() {
        thread = JoinableThread { [self] in run() }
    }

    func stop() {
        monitor.locked {
            stopping = true
            queue = []
            monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }

    /// The screen changed (a replug at another size): renditions from now on are for its profile.
    package func setProfile(_ newProfile: DeviceProfile, fit newFit: Fit?) {
        monitor.locked {
            profile = newProfile
            fit = newFit
        }
    }

    /// Whether a photo of this upright size gets a rendition smaller than itself for the screen.
    package func wouldShrink(_ upright: Size) -> Bool {
        monitor.locked { !RenditionPlan.targets(upright: upright, profiles: [profile], fit: fit).isEmpty }
    }

    /// Queues a photo; false when it was queued before (it is tried once per run).
    @discardableResult
    package func submit(_ job: Job) -> Bool {
        monitor.locked {
            guard seen.insert(job.original).inserted else { return false }
            queue.append(job)
            monitor.broadcast()
            return true
        }
    }

    func takeOutcomes() -> [Outcome] {
        monitor.locked {
            defer { outcomes = [] }
            return outcomes
        }
    }

    /// How many photos wait for room or their turn.
    var waiting: Int { monitor.locked { queue.count } }

    private func run() {
        _ = vitrine_make_thread_idle()
        while true {
            let next: (Job, DeviceProfile, Fit?)? = monitor.locked {
                while !stopping {
                    if queue.isEmpty {
                        monitor.wait()
                        continue
                    }
                    let available = availableBytes()
                    if let index = queue.firstIndex(where: {
                        available >= Int.saturatingSum($0.need.saturatingTimes(2), Self.margin)
                    }) {
                        return (queue.remove(at: index), profile, fit)
                    }
                    // No room now for any of them: look again later (or when another photo is queued).
                    monitor.wait(seconds: retrySeconds)
                }
                return nil
            }
            guard let (job, profile, fit) = next else { return }
            let started = MonotonicClock.seconds()
            let result = make(job, profile: profile, fit: fit)
            monitor.locked {
                outcomes.append(Outcome(job: job, result: result, seconds: MonotonicClock.seconds() - started))
            }
            wakeup.signal()
        }
    }

    private func make(_ job: Job, profile: DeviceProfile, fit: Fit?) -> Result<String, ImageError> {
        // The decode is charged to a budget of its own: the machine's free memory, not the player's.
        let writer = RenditionWriter(budget: MemoryBudget(limit: 2 * job.need + Self.margin))
        do {
            let header = try writer.header(of: job.original)
            guard
                let target = RenditionPlan.targets(upright: header.displayedSize, profiles: [profile], fit: fit).first
            else {
                return .failure(
                    ImageError(
                        file: job.original,
                        reason: .unsupported("no rendition is smaller than the photo for \(profile.rendition)")))
            }
            let folder = PathText.directory(of: job.original)
            guard folder == libraryRoot || folder.hasPrefix(libraryRoot + "/") else {
                return .failure(ImageError(file: job.original, reason: .unsupported("not in the library")))
            }
            let mirror = cacheRoot + String(folder.dropFirst(libraryRoot.count))
            do {
                try FileBytes.createDirectories(mirror)
            } catch {
                return .failure(ImageError(file: mirror, reason: .cannotWrite(error)))
            }
            let name = job.original.split(separator: "/").last.map(String.init) ?? job.original
            let destination = "\(mirror)/\(RenditionPlan.fileName(original: name, size: target.size))"
            try writer.write(
                original: job.original, header: header, size: target.size, to: destination, quality: quality,
                maxMegapixels: maxMegapixels)
            return .success(destination)
        } catch {
            return .failure(error)
        }
    }
}
