import VitrineCore
import VitrinePlatform

/// The web remote's slow work (a finished upload's content check, fsync and rename; a library thumbnail) on a
/// `Worker` of its own, in the order asked, so the player's loop answers a request later instead of waiting for a
/// disk or a decoder. Answers come back through `wakeup`. The queue is bounded: a page asking for a thousand
/// thumbnails at once gets the rest refused, not a thousand jobs held.
final class WebWorker {
    /// A job's answer, and a log line when it changed the library (which is then read again).
    struct Done: Sendable {
        var response: WebServer.Response
        var libraryChange: String?
        /// A photo the job put in place, complete: the show takes it at once instead of waiting to tell a link from
        /// a file being written.
        var placed: String?
        /// For an upload that waited at its headers: its file opened (then `response` is unused), or nil when
        /// refused with `response`. Nil for every other job.
        var upload: Upload?

        enum Upload: Sendable {
            case started(UploadSaver.Started)
            case refused
        }

        /// Uploads of earlier requests whose files are gone (their clients gave up): their entries go.
        var goneUploads: [WebServer.Pending] = []

        init(_ response: WebServer.Response, libraryChange: String? = nil, placed: String? = nil) {
            self.response = response
            self.libraryChange = libraryChange
            self.placed = placed
        }
    }

    typealias Job = @Sendable () -> Done

    static let queueLimit = 64

    private let worker: Worker<(WebServer.Pending, Done)>
    var wakeup: Wakeup { worker.wakeup }

    init() throws(RuntimeError) {
        worker = try Worker(.inOrder(limit: Self.queueLimit))
    }

    /// False when the queue is full.
    func submit(_ pending: WebServer.Pending, _ job: @escaping Job) -> Bool {
        worker.submit { _ in (pending, job()) }
    }

    /// The answers finished since the last call.
    func take() -> [(WebServer.Pending, Done)] { worker.take() }

    /// Waits for the job running now; the ones not started are dropped (their requests are answered by the
    /// server's stop).
    func stop() { worker.stop() }
}
