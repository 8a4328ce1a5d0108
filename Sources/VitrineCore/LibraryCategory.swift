/// A category of the library: one of its subfolders, or the photos directly in its root.
public struct LibraryCategory: Sendable, Equatable {
    /// The folder name; empty for the library root.
    public var name: String
    public var path: String

    public init(name: String, path: String) {
        self.name = name
        self.path = path
    }

    public var isRoot: Bool { name.isEmpty }
}
