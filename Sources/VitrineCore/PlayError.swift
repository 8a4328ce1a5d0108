/// Why `vitrine play` cannot start, in one line.
public struct PlayError: Error, CustomStringConvertible {
    public var description: String
    /// A screen may yet be plugged in: the cards are there, nothing is connected.
    public var nothingConnected = false
    /// Not a failure: SIGTERM or SIGINT came while the player was still waiting for a screen (exit 0).
    public var stopped = false

    public init(_ description: String, nothingConnected: Bool = false, stopped: Bool = false) {
        self.description = description
        self.nothingConnected = nothingConnected
        self.stopped = stopped
    }
}
