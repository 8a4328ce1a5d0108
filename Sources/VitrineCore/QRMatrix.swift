/// A QR code's modules, row by row, true for dark: what the pairing code paints over the picture.
public struct QRMatrix: Sendable, Equatable {
    public var width: Int
    public var modules: [Bool]

    public init(width: Int, modules: [Bool]) {
        precondition(modules.count == width * width, "a QR code is square")
        self.width = width
        self.modules = modules
    }

    public func isDark(x: Int, y: Int) -> Bool { modules[y * width + x] }
}
