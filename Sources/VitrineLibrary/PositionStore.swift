import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The slide on screen (and, in `shuffle`, the round it is in), kept in a small file so a player that is killed, crashes or loses power comes back to it.
/// Each save writes a whole new file under a temporary name, flushes it and renames it over the old one: a failed
/// save (a full disk, a read-only card) leaves the last good position as it was.
public struct PositionStore: Sendable {
    public struct Position: Equatable, Sendable {
        public var library: String
        public var slide: SlideID
        /// The `shuffle` round the slide is in.
        public var selection: SelectionState?

        public init(library: String, slide: SlideID, selection: SelectionState? = nil) {
            self.library = library
            self.slide = slide
            self.selection = selection
        }
    }

    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// `positionFile`, else `$STATE_DIRECTORY/position.json` when systemd gives the service a state folder
    /// (`StateDirectory=`), else none: a player started by hand does not leave files behind unless asked to.
    public static func path(settings: Settings) -> String? {
        if let explicit = settings.positionFile { return explicit.isEmpty ? nil : explicit }
        return StateDirectory.path.map { "\($0)/position.json" }
    }

    /// The file of one of several screens' shows: `position.json` becomes `position-NAME.json` beside it.
    public static func path(settings: Settings, output: String) -> String? {
        guard let path = path(settings: settings) else { return nil }
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let file = path[slash...]
        let stem = file.hasSuffix(".json") ? file.dropLast(5) : file
        return "\(path[..<slash])\(stem)-\(output).json"
    }

    /// The saved position; nil when there is none or it cannot be read (then the show starts from the top).
    public func load() -> Position? {
        guard let text = try? FileBytes.readText(path), let value = try? JSONParser.parse(text),
            let object = try? ConfigObject(value, file: path, path: ""),
            let library = try? object.string("library"), let category = try? object.string("category"),
            let slide = try? object.string("slide")
        else { return nil }
        // A round that cannot be read is started afresh; the slide is still resumed.
        let selection = object["selection"].flatMap(SelectionState.parse)
        return Position(library: library, slide: SlideID(category: category, name: slide), selection: selection)
    }

    public func save(_ position: Position) throws(FileError) {
        let selection = position.selection.map { ",\"selection\":\($0.json)" } ?? ""
        let text =
            "{\"version\":2,\"library\":\(JSONText.quote(position.library)),"
            + "\"category\":\(JSONText.quote(position.slide.category)),"
            + "\"slide\":\(JSONText.quote(position.slide.name))\(selection)}\n"
        try FileBytes.writeAtomically(Array(text.utf8), to: path, durable: true)
    }
}
