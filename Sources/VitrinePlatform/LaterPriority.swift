/// A worker thread's priority, lowered once its first job is done: the first job (the first category's index, the
/// first photo) runs at the player's own priority, since nothing is on screen until it is done; later ones run below
/// what is due at every vblank. Call `lower()` on the worker's thread; an unprivileged thread cannot raise it back.
public final class LaterPriority: Sendable {
    private let niceness: Int32
    private let lowered = Locked(false)

    public init(niceness: Int32) { self.niceness = niceness }

    /// Lowers the calling thread the first time; later calls do nothing. A thread that cannot lower itself (a
    /// seccomp filter) keeps the player's priority.
    public func lower() {
        lowered.withLock { done in
            guard !done else { return }
            done = true
            JoinableThread.lowerPriority(niceness: niceness)
        }
    }
}
