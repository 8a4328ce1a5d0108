import VitrineCore
import VitrinePlatform

/// Reads the library's category list off the player's thread. A library on a NAS or a FUSE mount can stop
/// answering for a minute (Wi-Fi, a disk spinning up), and `readdir` then sleeps with it: the player's thread
/// must never be the one waiting. Asks coalesce (a `Worker` that keeps the newest job only): while a read is out,
/// any number of asks make one more read after it, so a stalled library holds one thread and nothing piles up.
final class CategoryLister {
    struct Outcome: Sendable {
        var serial: Int
        var result: Result<[LibraryCategory], FileError>
        /// What `statfs` says the library is on when that is a network or FUSE filesystem (asked here too: it
        /// waits on the same share).
        var remoteKind: String?
    }

    private let library: Library
    private let worker: Worker<Outcome>
    private var lastSerial = 0
    var wakeup: Wakeup { worker.wakeup }

    init(library: Library) throws(RuntimeError) {
        self.library = library
        worker = try Worker(.newestOnly)
    }

    /// Asks for the list; returns the serial its outcome (or a later one's) will carry.
    @discardableResult
    func ask() -> Int {
        lastSerial += 1
        let serial = lastSerial
        let library = self.library
        worker.submit { _ in
            let result: Result<[LibraryCategory], FileError>
            do throws(FileError) {
                result = .success(try library.categories())
            } catch {
                result = .failure(error)
            }
            return Outcome(serial: serial, result: result, remoteKind: RemoteFilesystem.kind(of: library.root))
        }
        return serial
    }

    /// Whether a read is out or waiting.
    var isBusy: Bool { worker.isBusy }

    /// The newest list read since the last call.
    func take() -> Outcome? { worker.take().last }

    func stop() { worker.stop() }
}
