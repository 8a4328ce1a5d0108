import VitrineCore
import VitrinePlatform

/// Why the web remote refused a request: the HTTP status and one line for the page, naming the category, photo or
/// file and, for a system call that failed, errno.
public struct WebError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var message: String

    public init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    init(_ error: FileError) {
        self.init(500, "\(error)")
    }

    public var description: String { message }

    var response: WebServer.Response { .error(status, message) }
}
