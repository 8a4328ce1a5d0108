/// A slide's identity: its category plus its path inside the category without the rendition suffix and extension
/// (`Holidays` + `2024/beach`). Never a list index, so files coming and going do not make the show jump.
public struct SlideID: Hashable, Sendable, CustomStringConvertible {
    /// The category's folder name; empty for photos directly in the library root.
    public var category: String
    public var name: String

    public init(category: String, name: String) {
        self.category = category
        self.name = name
    }

    public var description: String { category.isEmpty ? name : "\(category)/\(name)" }
}
