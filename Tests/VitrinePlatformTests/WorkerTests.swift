import Synchronization
import Testing
import VitrineTestSupport

@testable import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one worker type on a real thread and a real eventfd: order, a full queue, the newest only, cancellation by
/// generation (the running job told, its result dropped) and a stop that releases what queued jobs hold.
@Suite struct WorkerTests {
    /// A counter the jobs and the test share.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func add() { value.add(1, ordering: .sequentiallyConsistent) }
        var count: Int { value.load(ordering: .sequentiallyConsistent) }
    }

    /// Something a queued job holds: counts its release.
    final class Held: Sendable {
        let released: Counter
        init(_ released: Counter) { self.released = released }
        deinit { released.add() }
    }

    /// What a job does while it is "working": waits for `condition`, at most 10 s (a worker that never tells its
    /// job to end makes the test fail, not hang).
    static func work(until condition: () -> Bool) {
        let deadline = MonotonicClock.seconds() + 10
        while !condition() && MonotonicClock.seconds() < deadline { usleep(1000) }
    }

    /// Whether the worker's eventfd is readable within `seconds`: the loop would wake.
    static func wakes(_ wakeup: Wakeup, within seconds: Double) -> Bool {
        var entry = pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, Int32(seconds * 1000)) == 1
    }

    /// No result comes within 0.1 s. A wake alone proves nothing: a worker rings after adding its result, so a
    /// `take` between the two has the result already and leaves the ring for nothing.
    static func nothingMore<Output: Sendable>(_ worker: Worker<Output>) -> Bool {
        _ = wakes(worker.wakeup, within: 0.1)
        return worker.take().isEmpty
    }

    /// Takes results until `count` came or 10 s passed.
    static func collect<Output: Sendable>(_ worker: Worker<Output>, _ count: Int) -> [Output] {
        var outputs: [Output] = []
        _ = Loopback.eventually(within: 10) {
            if wakes(worker.wakeup, within: 0.05) { outputs += worker.take() }
            return outputs.count >= count
        }
        return outputs
    }

    @Test func jobsRunInOrderAndTheirResultsWakeTheLoop() throws {
        let worker = try Worker<Int>(.inOrder(limit: 8))
        #expect(!Self.wakes(worker.wakeup, within: 0))
        for index in 0..<5 { #expect(worker.submit { _ in index }) }
        #expect(Self.collect(worker, 5) == [0, 1, 2, 3, 4])
        #expect(worker.take().isEmpty)
        worker.stop()
    }

    @Test func aFullQueueRefusesAndAStoppedWorkerTakesNothing() throws {
        let worker = try Worker<Int>(.inOrder(limit: 2))
        let started = Counter()
        #expect(
            worker.submit { isCancelled in
                started.add()
                Self.work(until: isCancelled)
                return 0
            })
        #expect(Loopback.eventually(within: 10) { started.count == 1 })
        #expect(worker.submit { _ in 1 })
        #expect(worker.submit { _ in 2 })
        #expect(!worker.submit { _ in 3 }, "a third job waiting is one too many")
        worker.stop()
        #expect(!worker.submit { _ in 4 })
        #expect(worker.take().isEmpty, "the running job was stopped, the waiting ones dropped")
    }

    @Test func cancelTellsTheRunningJobAndDropsItsResultAndTheQueue() throws {
        let worker = try Worker<String>(.inOrder(limit: 8))
        let started = Counter()
        let sawCancel = Counter()
        worker.submit { isCancelled in
            started.add()
            // A decode asks between batches of rows; this one would run on without being told.
            Self.work(until: isCancelled)
            if isCancelled() { sawCancel.add() }
            return "old"
        }
        worker.submit { _ in "queued before the cancel" }
        #expect(Loopback.eventually(within: 10) { started.count == 1 })
        worker.cancel()
        worker.submit { _ in "new" }
        #expect(Self.collect(worker, 1) == ["new"])
        #expect(sawCancel.count == 1)
        #expect(Self.nothingMore(worker), "the old job's result was dropped")
        worker.stop()
    }

    @Test func newestOnlyReplacesTheJobNotStartedYet() throws {
        let worker = try Worker<Int>(.newestOnly)
        let started = Counter()
        let release = Counter()
        worker.submit { _ in
            started.add()
            Self.work { release.count > 0 }
            return 1
        }
        #expect(Loopback.eventually(within: 10) { started.count == 1 })
        for index in 2...4 { worker.submit { _ in index } }
        release.add()
        #expect(Self.collect(worker, 2) == [1, 4])
        worker.stop()
    }

    @Test func stopReleasesWhatQueuedJobsHoldAndWaitsForTheRunningOne() throws {
        let worker = try Worker<Int>(.inOrder(limit: 8))
        let started = Counter()
        let ran = Counter()
        let released = Counter()
        worker.submit { isCancelled in
            started.add()
            Self.work(until: isCancelled)
            ran.add()
            return 0
        }
        #expect(Loopback.eventually(within: 10) { started.count == 1 })
        do {
            let held = Held(released)
            worker.submit { _ in
                _ = held
                return 1
            }
        }
        #expect(released.count == 0, "the queued job holds it")
        worker.stop()
        #expect(ran.count == 1, "stop returned after the running job ended")
        #expect(released.count == 1, "the queued job was dropped, and what it held with it")
        #expect(started.count == 1)
    }

    /// Labelled jobs, as the decodes of slides: one for a slide already waiting or running is merged into it, an
    /// urgent one (to show) goes ahead of the others (prefetches) and lifts a waiting one of the same slide, and
    /// `cancel(key:)` drops one slide's job and result alone, telling it when it runs.
    @Test func labelledJobsMergeGoAheadWhenUrgentAndCancelAlone() throws {
        typealias Label = Worker<String>.Label
        let worker = try Worker<String>(.inOrder(limit: 8))
        let started = Counter()
        let release = Counter()
        let sawCancel = Counter()
        #expect(
            worker.submit(Label(key: "a", variant: 1)) { isCancelled in
                started.add()
                Self.work { release.count > 0 || isCancelled() }
                if isCancelled() { sawCancel.add() }
                return "a"
            })
        #expect(Loopback.eventually(within: 10) { started.count == 1 })
        #expect(!worker.submit(Label(key: "a", variant: 1)) { _ in "a again" }, "merged into the running one")
        #expect(worker.submit(Label(key: "a", variant: 2)) { _ in "a of the next generation" })
        #expect(worker.submit(Label(key: "b", variant: 1)) { _ in "b" })
        #expect(worker.submit(Label(key: "c", variant: 1)) { _ in "c" })
        #expect(!worker.submit(Label(key: "b", variant: 1)) { _ in "b again" }, "merged into the waiting one")
        // c is to be shown now: ahead of the prefetches, and it takes b's place when b is asked for urgently too.
        #expect(worker.submit(Label(key: "c", variant: 1, urgent: true)) { _ in "c now" })
        #expect(worker.submit(Label(key: "d", variant: 1, urgent: true)) { _ in "d now" })
        worker.cancel(key: "a")
        #expect(Self.collect(worker, 3) == ["c now", "d now", "b"], "a's jobs and results are gone")
        #expect(sawCancel.count == 1, "the running job was told")
        #expect(Self.nothingMore(worker), "a's jobs and results are gone")
        worker.stop()
    }

    /// The latest job only, as the index of the category the show switched to: a new job tells the running one to
    /// end, its result goes to the discard hook (the watches it placed are handed back), and a result done before
    /// the new job came is still there to take.
    @Test func latestCancelsTheRunningJobKeepsWhatWasDoneAndHandsBackWhatItDropped() throws {
        let discarded = Locked<[String]>([])
        let worker = try Worker<String>(.latest) { output in discarded.withLock { $0.append(output) } }
        #expect(worker.submit { _ in "done before" })
        #expect(Loopback.eventually(within: 10) { Self.wakes(worker.wakeup, within: 0.05) })
        let started = Counter()
        worker.submit { isCancelled in
            started.add()
            Self.work(until: isCancelled)
            return "switched away from"
        }
        #expect(Loopback.eventually(within: 10) { started.count == 1 })
        worker.submit { _ in "replaced while waiting" }
        worker.submit { _ in "the latest" }
        #expect(Self.collect(worker, 2) == ["done before", "the latest"])
        #expect(discarded.withLock { $0 } == ["switched away from"])
        worker.stop()
    }
}
