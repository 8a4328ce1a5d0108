/// The `href` of one response in a WebDAV folder listing (RFC 4918 §14.7), taken apart before any of it reaches a
/// path: a server may answer with an absolute URL, a path, escapes in either case, or (hostile or broken) a name
/// from another folder, another host or `..`.
public enum DAVHref {
    public enum Meaning: Sendable, Equatable {
        /// The listed folder itself (Depth 1 answers include it).
        case itself
        case child(String)
    }

    /// What `href` names, in the listing of `folder` (names below `location`).
    public static func meaning(of href: String, location: RemoteLocation, folder: [String]) -> Result<
        Meaning, RemoteLocationProblem
    > {
        var path = Substring(href)
        if let separator = href.firstRange(of: "://") {
            switch RemoteLocation.parse(String(href[..<separator.upperBound]) + "x") {
            case .failure: return .failure(.init("names \(quoted(href)), which is not an http(s) URL"))
            case .success: break
            }
            let rest = href[separator.upperBound...]
            let authority = rest.prefix { $0 != "/" }
            guard case .success(let other) = RemoteLocation.parse(String(href[..<separator.upperBound]) + authority),
                other.scheme == location.scheme, other.host.lowercased() == location.host.lowercased(),
                other.effectivePort == location.effectivePort
            else {
                return .failure(.init("names \(quoted(href)), on another server than \(location.origin)"))
            }
            path = rest.dropFirst(authority.count)
        }
        guard path.hasPrefix("/") else { return .failure(.init("names \(quoted(href)), which is not a path")) }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        var names: [String] = []
        for part in path.split(separator: "/") {
            guard let name = RemoteLocation.percentDecoded(part) else {
                return .failure(.init("names \(quoted(href)), with a broken escape or a name that is not UTF-8"))
            }
            names.append(name)
        }
        let expected = location.folders + folder
        guard names.count >= expected.count, Array(names[..<expected.count]) == expected else {
            return .failure(.init("names \(quoted(href)), outside the folder listed"))
        }
        let rest = names[expected.count...]
        guard let name = rest.first else { return .success(.itself) }
        guard rest.count == 1 else { return .failure(.init("names \(quoted(href)), below the folder listed")) }
        if let problem = RemoteName.problem(name) { return .failure(.init("names \(quoted(href)), which \(problem)")) }
        return .success(.child(name))
    }

    /// A server's text in a message, cut short and with control characters shown as `?`.
    public static func quoted(_ text: String) -> String {
        let clean = String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(120).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
        return "\"" + clean + (text.unicodeScalars.count > 120 ? "…" : "") + "\""
    }
}
