import VitrineCore

/// The web remote's slow work (a finished upload's content check, fsync and rename; a library thumbnail) on one
/// thread of its own, in the order asked, so the player's loop answers a request later instead of waiting for a
/// disk or a decoder. Answers come back through `wakeup`. The queue is bounded: a page asking for a thousand
/// thumbnails at once gets the rest refused, not a thousand jobs held.
final class WebWorker {
    /// A job's answer, and a log line when it changed the library (which is then read again).
    struct Done: Sendable {
        var response: WebServer.Response
        var libraryChange: String?

        init(_ response: WebServer.Response, libraryChange: String? = nil) {
            self.response = response
            self.libraryChange = libraryChange
        }
    }

    typealias Job = @Sendable () -> Done

    private final class Shared: @unchecked Sendable {
        // @unchecked: every field is touched only inside `monitor.locked`.
        let monitor = Monitor()
        var queue: [(WebServer.Pending, Job)] = []
        var done: [(WebServer.Pending, Done)] = []
        var stopping = false
    }

    static let queueLimit = 64

    let wakeup: Wakeup
    private let shared = Shared()
    private var thread: JoinableThread?

    init() throws(RuntimeError) {
        wakeup = try Wakeup()
    }

    /// False when the queue is full.
    func submit(_ pending: WebServer.Pending, _ job: @escaping Job) -> Bool {
        let shared = self.shared
        let accepted = shared.monitor.locked {
            guard shared.queue.count < Self.queueLimit, !shared.stopping else { return false }
            shared.queue.append((pending, job))
            shared.monitor.broadcast()
            return true
        }
        guard accepted, thread == nil else { return accepted }
        let wakeup = self.wakeup
        thread = JoinableThread {
            while true {
                let next: (WebServer.Pending, Job)? = shared.monitor.locked {
                    while shared.queue.isEmpty && !shared.stopping { shared.monitor.wait() }
                    return shared.stopping ? nil : shared.queue.removeFirst()
                }
                guard let (pending, job) = next else { return }
                let done = job()
                shared.monitor.locked { shared.done.append((pending, done)) }
                wakeup.signal()
            }
        }
        return true
    }

    /// The answers finished since the last call.
    func take() -> [(WebServer.Pending, Done)] {
        wakeup.drain()
        return shared.monitor.locked {
            defer { shared.done = [] }
            return shared.done
        }
    }

    /// Waits for the job running now; the ones not started are dropped (their requests are answered by the
    /// server's stop).
    func stop() {
        shared.monitor.locked {
            shared.stopping = true
            shared.queue = []
            shared.monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }
}
