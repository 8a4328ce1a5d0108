import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The folder systemd gives the service for files it keeps across restarts (`StateDirectory=`). A player started
/// by hand has none and leaves no files behind unless its config names them.
public enum StateDirectory {
    /// `$STATE_DIRECTORY`; it may list several folders separated by colons, and the first is this service's.
    public static var path: String? {
        guard let state = getenv("STATE_DIRECTORY").map({ String(cString: $0) }), !state.isEmpty else { return nil }
        return state.split(separator: ":").first.map(String.init) ?? state
    }

    /// `renditionCacheFolder`, else `$STATE_DIRECTORY/renditions`, else none.
    public static func renditionCacheFolder(settings: Settings) -> String? {
        if let explicit = settings.renditionCacheFolder { return explicit.isEmpty ? nil : explicit }
        return path.map { "\($0)/renditions" }
    }

    /// `headerCacheFolder`, else `$STATE_DIRECTORY/headers`, else none.
    public static func headerCacheFolder(settings: Settings) -> String? {
        if let explicit = settings.headerCacheFolder { return explicit.isEmpty ? nil : explicit }
        return path.map { "\($0)/headers" }
    }
}
