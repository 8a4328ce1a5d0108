import CLinux

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A program the player runs beside itself (a sync), with its standard output in a pipe the loop reads and a
/// pidfd the loop watches for its end. The child starts with every signal at its default and none blocked (the
/// player blocks the ones its signalfd reads, and a mask is inherited through exec), standard input from
/// /dev/null, standard error shared (its lines go to the journal with the player's), in a process group of its
/// own (a Ctrl-C at the terminal stops the player, which ends the child).
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let outputFile: Descriptor
    private let endFile: Descriptor

    /// The read end of the child's standard output; non-blocking.
    public var output: Int32 { outputFile.number }
    /// Readable once the child has ended.
    public var endWatch: Int32 { endFile.number }

    private init(pid: pid_t, output: consuming Descriptor, end: consuming Descriptor) {
        self.pid = pid
        outputFile = output
        endFile = end
    }

    public static func spawn(_ executable: String, _ arguments: [String]) throws(RuntimeError) -> ChildProcess {
        // Glibc's module has no pipe2: flags set after, which is safe as children are started on one worker only.
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw RuntimeError("make a pipe", errno: errno) }
        let reading = Descriptor(taking: ends[0])
        let writing = Descriptor(taking: ends[1])
        _ = fcntl(reading.number, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writing.number, F_SETFD, FD_CLOEXEC)
        // Only the loop's end is non-blocking: a child that writes faster than the loop reads waits.
        _ = fcntl(reading.number, F_SETFL, O_NONBLOCK)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writing.number, 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var words: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) }
        words.append(nil)
        defer { for word in words { free(word) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, &words, environ)
        writing.close()
        guard status == 0 else { throw RuntimeError("start \(executable)", errno: status) }
        let end = Descriptor(taking: vitrine_pidfd_open(pid))
        guard end.number >= 0 else {
            let failure = errno
            kill(pid, SIGKILL)
            var ignored: Int32 = 0
            waitpid(pid, &ignored, 0)
            throw RuntimeError("watch process \(pid) (pidfd_open)", errno: failure)
        }
        _ = fcntl(end.number, F_SETFD, FD_CLOEXEC)
        return ChildProcess(pid: pid, output: reading, end: end)
    }

    /// Appends what the child has written so far to `buffer`; false once its output has ended.
    public func read(into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer += chunk[..<count]
                continue
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            return errno == EAGAIN
        }
    }

    public func signal(_ number: Int32) {
        kill(pid, number)
    }

    /// How the child ended, once `endWatch` is readable: `exit status 1`, `killed by signal 9`; nil while it runs.
    public func reap() -> String? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        return Self.describe(status)
    }

    private static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        return signal == 0 ? "exit status \((status >> 8) & 0xff)" : "killed by signal \(signal)"
    }
}
