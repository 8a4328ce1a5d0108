import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The background thread that turns slides into frames, so the player thread never waits on a decode.
///
/// Requests to show jump ahead of prefetches; a request for a slide already queued or being decoded is merged
/// into it; a cancelled request leaves the queue, or its result is dropped when it was already being decoded.
/// Results are collected by the player thread after the worker rings `wakeup`.
public final class DecodeWorker: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `monitor`; the renderer is used only by the worker thread.
    public struct Outcome: Sendable {
        public var request: DecodeRequest
        public var result: Result<Frame, ImageError>
        /// The files that were read (the picked renditions; two for a portrait pair).
        public var file: String?
        public var seconds: Double
        /// libjpeg's warnings for photos it decoded past damage (shown, and logged once).
        public var warnings: [String] = []
    }

    private let monitor = Monitor()
    private let wakeup: Wakeup
    private let renderer: SlideRenderer
    private var options: RenderOptions
    private var queue: [DecodeRequest] = []
    private var current: DecodeRequest?
    private var currentCancelled = false
    private var outcomes: [Outcome] = []
    private var stopping = false
    private var thread: JoinableThread?

    private let crashGuard: CrashGuard?

    package init(
        budget: MemoryBudget, options: RenderOptions, wakeup: Wakeup, fontPath: String, crashGuard: CrashGuard? = nil
    ) {
        renderer = SlideRenderer(budget: budget, fontPath: fontPath)
        self.options = options
        self.wakeup = wakeup
        self.crashGuard = crashGuard
    }

    public func start() {
        // Between batches of rows the decode asks whether its slide is still wanted: a cancelled or superseded
        // decode, or a stop, ends within a few batches instead of at the photo's last row.
        renderer.frames.isCancelled = { [monitor, unowned self] in monitor.locked { currentCancelled || stopping } }
        thread = JoinableThread { [self] in run() }
    }

    public func stop() {
        monitor.locked {
            stopping = true
            queue = []
            monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }

    public func setOptions(_ newOptions: RenderOptions) {
        monitor.locked { options = newOptions }
    }

    public func submit(_ request: DecodeRequest) {
        monitor.locked {
            let id = request.slide.id
            if let current, current.slide.id == id, current.generation == request.generation, !currentCancelled {
                return
            }
            if let index = queue.firstIndex(where: { $0.slide.id == id && $0.generation == request.generation }) {
                if request.purpose == .show && queue[index].purpose == .prefetch {
                    queue.remove(at: index)
                } else {
                    return
                }
            }
            if request.purpose == .show {
                queue.insert(request, at: queue.firstIndex { $0.purpose == .prefetch } ?? queue.count)
            } else {
                queue.append(request)
            }
            monitor.broadcast()
        }
    }

    public func cancel(_ id: SlideID) {
        monitor.locked {
            queue.removeAll { $0.slide.id == id }
            if current?.slide.id == id { currentCancelled = true }
        }
    }

    public func takeOutcomes() -> [Outcome] {
        monitor.locked {
            defer { outcomes = [] }
            return outcomes
        }
    }

    private func run() {
        while true {
            let next: (DecodeRequest, RenderOptions)? = monitor.locked {
                while queue.isEmpty && !stopping { monitor.wait() }
                guard !stopping else { return nil }
                let request = queue.removeFirst()
                current = request
                currentCancelled = false
                return (request, options)
            }
            guard let (request, options) = next else { return }
            let started = MonotonicClock.seconds()
            let result: Result<Frame, ImageError>
            var file: String?
            var warnings: [String] = []
            let originals = request.slide.photos.compactMap { $0.original ?? $0.files.first }
            do throws(ImageError) {
                if let crashGuard, let aside = originals.first(where: crashGuard.setAside.contains) {
                    throw ImageError(
                        file: aside,
                        reason: .setAside("the player stopped at least \(CrashGuard.limit) times while reading it"))
                }
                crashGuard?.reading(originals, on: .decode)
                defer { crashGuard?.done(on: .decode) }
                let rendered = try renderer.render(request.slide, options: options)
                file = rendered.files.joined(separator: " + ")
                warnings = rendered.warnings
                result = .success(rendered.frame)
            } catch {
                result = .failure(error)
            }
            let outcome = Outcome(
                request: request, result: result, file: file, seconds: MonotonicClock.seconds() - started,
                warnings: warnings)
            let deliver = monitor.locked {
                defer { current = nil }
                guard !currentCancelled else { return false }
                outcomes.append(outcome)
                return true
            }
            // A cancelled outcome is dropped here, on the worker, so its frame is freed at once.
            if deliver { wakeup.signal() }
        }
    }
}
