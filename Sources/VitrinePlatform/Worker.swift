/// Slow work off the loop: one thread runs the jobs in the order they came, and each result goes back to the loop
/// through `wakeup`, an eventfd the loop watches. Jobs are `@Sendable`, so Swift checks what they take across.
///
/// Cancellation is by generation: `cancel()` drops the jobs not started and the results not taken, and tells the
/// job running now through the `isCancelled` it is given (a job that reads files or decodes asks it between
/// steps and returns early); whatever that job still returns is dropped on the worker's thread. `stop()` drops the
/// queue, which releases what the jobs hold, and waits for the running job; `finish()` runs the queue out first.
package final class Worker<Output: Sendable> {
    package typealias Job = @Sendable (_ isCancelled: @Sendable () -> Bool) -> Output

    /// How jobs wait: in order up to a limit (a full queue refuses), or only the newest (a new job replaces the one
    /// not started yet: the work is worth doing only for the latest thing asked, the slide on screen).
    package enum Queue: Sendable {
        case inOrder(limit: Int)
        case newestOnly
    }

    private final class Shared: @unchecked Sendable {
        // @unchecked: every field is touched only inside `monitor.locked`.
        let monitor = Monitor()
        var waiting: [(generation: Int, job: Job)] = []
        var done: [Output] = []
        var generation = 0
        var running = false
        var stopping = false
        var finishing = false
    }

    package let wakeup: Wakeup
    private let queue: Queue
    private let shared = Shared()
    private var thread: JoinableThread?

    package init(_ queue: Queue) throws(RuntimeError) {
        wakeup = try Wakeup()
        self.queue = queue
    }

    deinit { stop() }

    /// Queues `job`; false when the queue is full or the worker stopped. The thread starts with the first job.
    @discardableResult
    package func submit(_ job: @escaping Job) -> Bool {
        let shared = self.shared
        let queue = self.queue
        let (accepted, replaced) = shared.monitor.locked { () -> (Bool, [(generation: Int, job: Job)]) in
            guard !shared.stopping, !shared.finishing else { return (false, []) }
            var replaced: [(generation: Int, job: Job)] = []
            switch queue {
            case .inOrder(let limit):
                guard shared.waiting.count < limit else { return (false, []) }
            case .newestOnly:
                replaced = shared.waiting
                shared.waiting = []
            }
            shared.waiting.append((shared.generation, job))
            shared.monitor.broadcast()
            return (true, replaced)
        }
        // A replaced job (and what it holds) goes here, outside the lock.
        _ = replaced
        if accepted, thread == nil { start() }
        return accepted
    }

    private func start() {
        let shared = self.shared
        let wakeup = self.wakeup
        thread = JoinableThread {
            while true {
                let next: (generation: Int, job: Job)? = shared.monitor.locked {
                    while shared.waiting.isEmpty && !shared.stopping && !shared.finishing { shared.monitor.wait() }
                    guard !shared.stopping, !shared.waiting.isEmpty else { return nil }
                    shared.running = true
                    return shared.waiting.removeFirst()
                }
                guard let (generation, job) = next else { return }
                let output = job { shared.monitor.locked { shared.stopping || shared.generation != generation } }
                let kept = shared.monitor.locked {
                    shared.running = false
                    guard !shared.stopping, shared.generation == generation else { return false }
                    shared.done.append(output)
                    return true
                }
                // A dropped output is freed here, on the worker, not on the loop.
                if kept { wakeup.signal() }
            }
        }
    }

    /// Whether a job is running or waiting.
    package var isBusy: Bool {
        let shared = self.shared
        return shared.monitor.locked { shared.running || !shared.waiting.isEmpty }
    }

    /// The results finished since the last call, in the order their jobs came.
    package func take() -> [Output] {
        wakeup.drain()
        let shared = self.shared
        return shared.monitor.locked {
            defer { shared.done = [] }
            return shared.done
        }
    }

    /// Drops the jobs not started and the results not taken; the running job is told to end early.
    package func cancel() {
        let shared = self.shared
        let dropped = shared.monitor.locked { () -> ([(generation: Int, job: Job)], [Output]) in
            shared.generation += 1
            defer {
                shared.waiting = []
                shared.done = []
            }
            return (shared.waiting, shared.done)
        }
        _ = dropped
    }

    /// Lets the jobs waiting run, then ends the thread (what must be written before the player exits); after it
    /// the worker takes no job.
    package func finish() {
        let shared = self.shared
        shared.monitor.locked {
            shared.finishing = true
            shared.monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }

    /// Drops the queue and waits for the running job; after it the worker takes no job.
    package func stop() {
        let shared = self.shared
        let dropped = shared.monitor.locked { () -> [(generation: Int, job: Job)] in
            shared.stopping = true
            shared.monitor.broadcast()
            defer { shared.waiting = [] }
            return shared.waiting
        }
        _ = dropped
        thread?.join()
        thread = nil
    }
}
