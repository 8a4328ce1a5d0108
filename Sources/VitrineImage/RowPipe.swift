#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Hands decoded rows from the decoding thread to the resampling thread through a small ring, so the two run at
/// once on two cores and no full-size decoded image is ever held.
///
/// The consumer asks for rows in increasing order; asking for row r frees every row before it. The producer waits
/// for a free slot before decoding into it.
final class RowPipe: @unchecked Sendable {
    // @unchecked: every field below is read and written only with `mutex` held; the ring's rows are written by the
    // producer before `publish` and read by the consumer after it, which the mutex orders.
    let rowBytes: Int
    let capacity: Int
    private let ring: UnsafeMutablePointer<UInt8>
    // Heap-allocated: pthread objects must not move, and `&` on a stored property gives no stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var produced = 0
    private var consumedBefore = 0
    private var failed = false
    private var consumerFinished = false

    /// The bytes a pipe of this shape allocates, for the memory budget.
    static func byteCount(rowBytes: Int, capacity: Int) -> Int { rowBytes * capacity }

    init(rowBytes: Int, capacity: Int) {
        self.rowBytes = rowBytes
        self.capacity = capacity
        ring = .allocate(capacity: rowBytes * capacity)
        mutex.initialize(to: pthread_mutex_t())
        changed.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
        ring.deallocate()
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    private func slot(_ row: Int) -> UnsafeMutablePointer<UInt8> { ring + (row % capacity) * rowBytes }

    /// Producer: the slots for rows `first..<first+count`, once the consumer has freed them. After the consumer
    /// has finished the slots are handed out anyway (their rows are decoded and dropped).
    func slots(first: Int, count: Int) -> [UnsafeMutablePointer<UInt8>] {
        precondition(count <= capacity, "batch larger than the ring")
        locked {
            while !consumerFinished && first + count - consumedBefore > capacity {
                pthread_cond_wait(changed, mutex)
            }
        }
        return (first..<first + count).map(slot)
    }

    /// Producer: rows before `end` are decoded.
    func publish(upTo end: Int) {
        locked {
            produced = end
            pthread_cond_broadcast(changed)
        }
    }

    /// Producer: decoding failed; the consumer stops at its next request.
    func fail() {
        locked {
            failed = true
            pthread_cond_broadcast(changed)
        }
    }

    /// Consumer: row `row`, waiting until it is decoded; nil once decoding has failed.
    func row(_ row: Int) -> UnsafePointer<UInt8>? {
        locked {
            consumedBefore = max(consumedBefore, row)
            pthread_cond_broadcast(changed)
            while produced <= row && !failed { pthread_cond_wait(changed, mutex) }
            return failed ? nil : UnsafePointer(slot(row))
        }
    }

    /// Consumer: no more rows are needed.
    func finishConsuming() {
        locked {
            consumerFinished = true
            pthread_cond_broadcast(changed)
        }
    }
}
