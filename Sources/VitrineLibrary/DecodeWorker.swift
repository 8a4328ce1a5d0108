import CLinux
import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The background thread that turns slides into frames, so the player thread never waits on a decode: a `Worker`
/// whose jobs are labelled by slide. Requests to show jump ahead of prefetches; a request for a slide already
/// queued or being decoded is merged into it; a cancelled request leaves the queue, or its result is dropped when it
/// was already being decoded (the decode itself asks between batches of rows and ends early). Results are collected
/// by the player thread after the worker rings `wakeup`.
public final class DecodeWorker {
    public struct Outcome: Sendable {
        public var request: DecodeRequest
        public var result: Result<Frame, ImageError>
        /// The files that were read (the picked renditions; two for a portrait pair).
        public var file: String?
        public var seconds: Double
        /// libjpeg's warnings for photos it decoded past damage (shown, and logged once).
        public var warnings: [String] = []
        /// Each photo's caption as drawn (nil where there is none).
        public var captions: [String?] = []
    }

    /// The renderer and its scratch memory, used by the worker's one thread only.
    private final class Decoder: @unchecked Sendable {
        // @unchecked: only the worker's thread touches the renderer, one job at a time.
        let renderer: SlideRenderer
        let crashGuard: CrashGuard?
        init(renderer: SlideRenderer, crashGuard: CrashGuard?) {
            self.renderer = renderer
            self.crashGuard = crashGuard
        }
    }

    private let worker: Worker<Outcome>
    private let decoder: Decoder
    /// The worker's thread's priority, lowered to `niceness` after the first photo.
    private let priority = LaterPriority(niceness: DecodeWorker.niceness)
    /// Read as each decode starts: a reload's new options apply to the decodes queued before it.
    private let options: Locked<RenderOptions>

    /// Rung when outcomes are ready.
    public var wakeup: Wakeup { worker.wakeup }

    package init(budget: MemoryBudget, options: RenderOptions, fontPath: String, crashGuard: CrashGuard? = nil)
        throws(RuntimeError)
    {
        worker = try Worker(.inOrder(limit: Int.max))
        decoder = Decoder(renderer: SlideRenderer(budget: budget, fontPath: fontPath), crashGuard: crashGuard)
        self.options = Locked(options)
    }

    public func stop() { worker.stop() }

    public func setOptions(_ newOptions: RenderOptions) {
        options.withLock { $0 = newOptions }
    }

    static func key(_ id: SlideID) -> String { "\(id.category)\u{0}\(id.name)" }

    /// The nice value of the worker's thread once the first photo is decoded: between a clip's decoding threads
    /// (`ClipStream.niceness`, 5), whose pictures are due at every vblank, and the index thread (10). The next slide,
    /// decoded while a clip starts, took the clip's CPU on two busy cores, and nine of its pictures came late. The
    /// first photo decodes at the player's own priority: nothing is on screen until it is done.
    static let niceness: Int32 = 8

    public func submit(_ request: DecodeRequest) {
        let decoder = self.decoder
        let options = self.options
        let priority = self.priority
        worker.submit(
            .init(key: Self.key(request.slide.id), variant: request.generation, urgent: request.purpose == .show)
        ) { isCancelled in
            let outcome = Self.decode(
                request, options: options.withLock { $0 }, decoder: decoder, isCancelled: isCancelled)
            vitrine_release_free_heap()
            priority.lower()
            return outcome
        }
    }

    public func cancel(_ id: SlideID) { worker.cancel(key: Self.key(id)) }

    public func takeOutcomes() -> [Outcome] { worker.take() }

    private static func decode(
        _ request: DecodeRequest, options: RenderOptions, decoder: Decoder, isCancelled: @escaping @Sendable () -> Bool
    ) -> Outcome {
        // Between batches of rows the decode asks whether its slide is still wanted: a cancelled or superseded
        // decode, or a stop, ends within a few batches instead of at the photo's last row.
        decoder.renderer.frames.isCancelled = isCancelled
        defer { decoder.renderer.frames.isCancelled = nil }
        let started = MonotonicClock.seconds()
        let result: Result<Frame, ImageError>
        var file: String?
        var warnings: [String] = []
        var captions: [String?] = []
        let originals = request.slide.photos.compactMap { $0.original ?? $0.files.first }
        let crashGuard = decoder.crashGuard
        do throws(ImageError) {
            if let crashGuard, let aside = originals.first(where: crashGuard.setAside.contains) {
                throw ImageError(
                    file: aside,
                    reason: .setAside("the player stopped at least \(CrashGuard.limit) times while reading it"))
            }
            crashGuard?.reading(originals, on: .decode)
            defer { crashGuard?.done(on: .decode) }
            let rendered = try decoder.renderer.render(request.slide, options: options, ages: request.ages)
            file = rendered.files.joined(separator: " + ")
            warnings = rendered.warnings
            captions = rendered.captions
            result = .success(rendered.frame)
        } catch {
            result = .failure(error)
        }
        return Outcome(
            request: request, result: result, file: file, seconds: MonotonicClock.seconds() - started,
            warnings: warnings, captions: captions)
    }
}
