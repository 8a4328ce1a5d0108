/// Why `vitrine play` cannot start, in one line.
public struct PlayError: Error, CustomStringConvertible {
    public var description: String
    /// A screen may yet be plugged in: the cards are there, nothing is connected.
    public var nothingConnected = false

    public init(_ description: String, nothingConnected: Bool = false) {
        self.description = description
        self.nothingConnected = nothingConnected
    }
}
