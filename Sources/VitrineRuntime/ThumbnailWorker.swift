import VitrineCore
import VitrineImage

/// Makes the JPEG of the slide on screen, once for everything that shows it elsewhere (the MQTT image topic, the
/// web remote's page), on a thread of its own (averaging a 4K frame down takes longer than a flip may wait), and
/// hands it to the loop through `wakeup`. One slot: a newer slide replaces one not started yet, and a finished
/// thumbnail (or failure) of a slide no longer wanted is dropped, so a fast show costs at most one thumbnail in
/// flight.
final class ThumbnailWorker {
    private final class Shared: @unchecked Sendable {
        // @unchecked: every field is touched only inside `monitor.locked`.
        let monitor = Monitor()
        var waiting: (frame: Frame, generation: Int)?
        var done: (jpeg: [UInt8], generation: Int)?
        var failure: (error: ImageError, generation: Int)?
        var stopping = false
    }

    let wakeup: Wakeup
    private let shared = Shared()
    private var thread: JoinableThread?
    private var generation = 0

    init() throws(RuntimeError) {
        wakeup = try Wakeup()
    }

    func submit(_ frame: Frame) {
        generation += 1
        let shared = self.shared
        let wakeup = self.wakeup
        let current = generation
        shared.monitor.locked {
            shared.waiting = (frame, current)
            shared.monitor.broadcast()
        }
        guard thread == nil else { return }
        thread = JoinableThread {
            while true {
                let job: (frame: Frame, generation: Int)? = shared.monitor.locked {
                    while shared.waiting == nil && !shared.stopping { shared.monitor.wait() }
                    defer { shared.waiting = nil }
                    return shared.stopping ? nil : shared.waiting
                }
                guard let job else { return }
                let result: Result<[UInt8], ImageError>
                do throws(ImageError) {
                    result = .success(try SlideThumbnail.jpeg(of: job.frame))
                } catch {
                    result = .failure(error)
                }
                shared.monitor.locked {
                    switch result {
                    case .success(let jpeg): shared.done = (jpeg, job.generation)
                    case .failure(let error): shared.failure = (error, job.generation)
                    }
                }
                wakeup.signal()
            }
        }
    }

    /// The thumbnail of the newest slide submitted, when it is done, or why it could not be made.
    func take() -> Result<[UInt8], ImageError>? {
        wakeup.drain()
        let newest = generation
        return shared.monitor.locked {
            defer {
                shared.done = nil
                shared.failure = nil
            }
            if let failure = shared.failure, failure.generation == newest { return .failure(failure.error) }
            guard let done = shared.done, done.generation == newest else { return nil }
            return .success(done.jpeg)
        }
    }

    func stop() {
        shared.monitor.locked {
            shared.stopping = true
            shared.monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }
}
