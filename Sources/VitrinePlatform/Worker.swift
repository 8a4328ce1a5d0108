/// Slow work off the loop: one thread runs the jobs in the order they came, and each result goes back to the loop
/// through `wakeup`, an eventfd the loop watches. Jobs are `@Sendable`, so Swift checks what they take across.
///
/// Cancellation is by generation: `cancel()` drops the jobs not started and the results not taken, and tells the
/// job running now through the `isCancelled` it is given (a job that reads files or decodes asks it between
/// steps and returns early); whatever that job still returns is dropped on the worker's thread. A job may carry a
/// `Label`: a job for what is already waiting or running is merged into it, an urgent one goes ahead of the others,
/// and `cancel(key:)` drops one thing's jobs and results alone (the decode of a slide no longer wanted). `stop()`
/// drops the queue, which releases what the jobs hold, and waits for the running job; `finish()` runs the queue out
/// first.
package final class Worker<Output: Sendable>: @unchecked Sendable {
    // @unchecked: what jobs share is in `Shared`, touched only inside its monitor; the thread is made and taken
    // under `thread`'s lock; the rest never changes after init. Jobs may be submitted from any thread (the web
    // remote's worker asks for renditions).
    package typealias Job = @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) -> Output

    /// What a job is for: `key` names the thing (a slide), `variant` the asking (the show's generation; jobs merge
    /// only when both agree), `urgent` puts it ahead of the jobs that are not.
    package struct Label: Equatable, Sendable {
        package var key: String
        package var variant: Int
        package var urgent: Bool

        package init(key: String, variant: Int = 0, urgent: Bool = false) {
            self.key = key
            self.variant = variant
            self.urgent = urgent
        }
    }

    /// How jobs wait: in order up to a limit (a full queue refuses), or only the newest (a new job replaces the one
    /// not started yet: the work is worth doing only for the latest thing asked, the slide on screen).
    package enum Queue: Sendable {
        case inOrder(limit: Int)
        case newestOnly
        /// As `newestOnly`, and the running job is told to end too (its result dropped): only the latest thing asked
        /// is worth finishing (the category the show switched to). Results already done are kept.
        case latest
        /// In order, but a job runs only once `isReady` says so for its label (a rendition needs free memory); while
        /// none is, the thread looks again every `retrySeconds` or when a job comes.
        case whenReady(retrySeconds: Double, isReady: @Sendable (Label?) -> Bool)
    }

    private struct Entry {
        var generation: Int
        var label: Label?
        var job: Job
    }

    private final class Shared: @unchecked Sendable {
        // @unchecked: every field is touched only inside `monitor.locked`.
        let monitor = Monitor()
        var waiting: [Entry] = []
        var done: [(label: Label?, output: Output)] = []
        var generation = 0
        var running = false
        /// The running job's label, and whether `cancel(key:)` has told it to end.
        var runningLabel: Label?
        var runningCancelled = false
        var stopping = false
        var finishing = false
    }

    package let wakeup: Wakeup
    private let queue: Queue
    private let shared = Shared()
    private let thread = Locked<JoinableThread?>(nil)
    /// Given each result dropped (on the worker's thread when its job was cancelled or stopped, on the caller's when
    /// `cancel` drops it untaken): for what a result holds that must not simply be freed (inotify watches a job
    /// placed).
    private let discard: (@Sendable (Output) -> Void)?

    package init(_ queue: Queue, discard: (@Sendable (Output) -> Void)? = nil) throws(RuntimeError) {
        wakeup = try Wakeup()
        self.queue = queue
        self.discard = discard
    }

    deinit { stop() }

    /// Queues `job`; false when the queue is full, the worker stopped, or (with a `label`) a job for the same thing
    /// is waiting or running already (an urgent one moves a waiting one ahead). The thread starts with the first job.
    @discardableResult
    package func submit(_ label: Label? = nil, _ job: @escaping Job) -> Bool {
        let shared = self.shared
        let queue = self.queue
        let (accepted, replaced) = shared.monitor.locked { () -> (Bool, [Entry]) in
            guard !shared.stopping, !shared.finishing else { return (false, []) }
            var replaced: [Entry] = []
            if let label {
                let same = { (other: Label?) in other?.key == label.key && other?.variant == label.variant }
                if same(shared.runningLabel), !shared.runningCancelled { return (false, []) }
                if let index = shared.waiting.firstIndex(where: { same($0.label) }) {
                    guard label.urgent, shared.waiting[index].label?.urgent == false else { return (false, []) }
                    replaced.append(shared.waiting.remove(at: index))
                }
            }
            switch queue {
            case .inOrder(let limit):
                guard shared.waiting.count < limit else { return (false, replaced) }
            case .whenReady:
                break
            case .newestOnly:
                replaced += shared.waiting
                shared.waiting = []
            case .latest:
                replaced += shared.waiting
                shared.waiting = []
                if shared.running { shared.runningCancelled = true }
            }
            let entry = Entry(generation: shared.generation, label: label, job: job)
            if label?.urgent == true {
                shared.waiting.insert(
                    entry, at: shared.waiting.firstIndex { $0.label?.urgent != true } ?? shared.waiting.count)
            } else {
                shared.waiting.append(entry)
            }
            shared.monitor.broadcast()
            return (true, replaced)
        }
        // A replaced job (and what it holds) goes here, outside the lock.
        _ = replaced
        if accepted { thread.withLock { if $0 == nil { $0 = makeThread() } } }
        return accepted
    }

    private func makeThread() -> JoinableThread {
        let shared = self.shared
        let wakeup = self.wakeup
        let discard = self.discard
        let queue = self.queue
        return JoinableThread {
            while true {
                let next: Entry? = shared.monitor.locked {
                    while !shared.stopping {
                        if shared.waiting.isEmpty {
                            if shared.finishing { return nil }
                            shared.monitor.wait()
                            continue
                        }
                        guard case .whenReady(let retrySeconds, let isReady) = queue else { break }
                        if let index = shared.waiting.firstIndex(where: { isReady($0.label) }) {
                            // The ready one goes first; the others keep their order.
                            shared.waiting.insert(shared.waiting.remove(at: index), at: 0)
                            break
                        }
                        if shared.finishing { return nil }
                        shared.monitor.wait(seconds: retrySeconds)
                    }
                    guard !shared.stopping, !shared.waiting.isEmpty else { return nil }
                    shared.running = true
                    let entry = shared.waiting.removeFirst()
                    shared.runningLabel = entry.label
                    shared.runningCancelled = false
                    return entry
                }
                guard let entry = next else { return }
                let generation = entry.generation
                let output = entry.job {
                    shared.monitor.locked {
                        shared.stopping || shared.generation != generation || shared.runningCancelled
                    }
                }
                let kept = shared.monitor.locked {
                    defer {
                        shared.running = false
                        shared.runningLabel = nil
                        shared.runningCancelled = false
                    }
                    guard !shared.stopping, shared.generation == generation, !shared.runningCancelled else {
                        return false
                    }
                    shared.done.append((entry.label, output))
                    return true
                }
                // A dropped output is freed here, on the worker, not on the loop.
                if kept {
                    wakeup.signal()
                } else {
                    discard?(output)
                }
            }
        }
    }

    /// How many jobs wait (not the running one).
    package var waitingCount: Int {
        let shared = self.shared
        return shared.monitor.locked { shared.waiting.count }
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
            return shared.done.map(\.output)
        }
    }

    /// Drops the jobs for `key` not started and their results not taken; the running one for it is told to end.
    package func cancel(key: String) {
        let shared = self.shared
        let dropped = shared.monitor.locked { () -> ([Entry], [(label: Label?, output: Output)]) in
            if shared.runningLabel?.key == key { shared.runningCancelled = true }
            let jobs = shared.waiting.filter { $0.label?.key == key }
            let results = shared.done.filter { $0.label?.key == key }
            shared.waiting.removeAll { $0.label?.key == key }
            shared.done.removeAll { $0.label?.key == key }
            return (jobs, results)
        }
        // Released here, outside the lock.
        for result in dropped.1 { discard?(result.output) }
    }

    /// Drops the jobs not started and the results not taken; the running job is told to end early.
    package func cancel() {
        let shared = self.shared
        let dropped = shared.monitor.locked { () -> ([Entry], [(label: Label?, output: Output)]) in
            shared.generation += 1
            defer {
                shared.waiting = []
                shared.done = []
            }
            return (shared.waiting, shared.done)
        }
        for result in dropped.1 { discard?(result.output) }
    }

    /// Lets the jobs waiting run, then ends the thread (what must be written before the player exits); after it
    /// the worker takes no job.
    package func finish() {
        let shared = self.shared
        shared.monitor.locked {
            shared.finishing = true
            shared.monitor.broadcast()
        }
        takeThread()?.join()
    }

    private func takeThread() -> JoinableThread? {
        thread.withLock { running in
            defer { running = nil }
            return running
        }
    }

    /// Drops the queue and waits for the running job; after it the worker takes no job.
    package func stop() {
        let shared = self.shared
        let dropped = shared.monitor.locked { () -> [Entry] in
            shared.stopping = true
            shared.monitor.broadcast()
            defer { shared.waiting = [] }
            return shared.waiting
        }
        _ = dropped
        takeThread()?.join()
    }
}
