/// Paths as text: the folder part and a path taken relative to another, with no file system call (settings name
/// files relative to the config's folder before anything is opened).
public enum PathText {
    /// The directory part of a path ("." when there is none).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `path` taken relative to `base` unless it is absolute.
    public static func resolve(_ path: String, relativeTo base: String) -> String {
        path.hasPrefix("/") ? path : (base == "." ? path : "\(base)/\(path)")
    }
}
