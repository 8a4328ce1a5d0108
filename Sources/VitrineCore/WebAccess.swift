/// Who may use the web remote: the decision for one HTTP request, from its method, target and headers and the
/// frame's access token. A browser proves the token once with `?token=` (the paired phone's QR code) and then
/// carries it in a cookie; a script sends `Authorization: Bearer`. A request that changes something and rides on
/// the cookie must come from the page's own origin, so another site open on the phone cannot make the browser
/// skip slides or delete photos (cross-site request forgery); a bearer token is never sent by a browser on its own.
public enum WebAccess {
    public struct Request: Sendable {
        public var method: String
        /// The path and query, as sent.
        public var target: String
        /// Header names in lowercase.
        public var headers: [String: String]

        public init(method: String, target: String, headers: [String: String]) {
            self.method = method
            self.target = target
            self.headers = headers
        }
    }

    public enum Decision: Equatable, Sendable {
        /// Serve it; `setCookie` carries the token into a cookie after a `?token=` visit.
        case allow(setCookie: Bool)
        case unauthorized
        case crossOrigin(String)
    }

    public static let cookieName = "vitrine_token"

    public static func decide(_ request: Request, token: String) -> Decision {
        let query = queryToken(request.target)
        let bearer = request.headers["authorization"].flatMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            return String(parts[1]).trimmingWhitespace()
        }
        let cookie = request.headers["cookie"].flatMap { cookieToken($0) }
        if let bearer, matches(bearer, token) { return .allow(setCookie: false) }
        let byQuery = query.map { matches($0, token) } ?? false
        let byCookie = cookie.map { matches($0, token) } ?? false
        guard byQuery || byCookie else { return .unauthorized }
        if !["GET", "HEAD", "OPTIONS"].contains(request.method.uppercased()) {
            // Origin, else Referer (older browsers omit Origin on same-origin POSTs); neither is refused too.
            let source = request.headers["origin"] ?? request.headers["referer"]
            guard let source, let host = request.headers["host"], sameOrigin(source, host: host) else {
                return .crossOrigin(request.headers["origin"] ?? request.headers["referer"] ?? "no Origin header")
            }
        }
        return .allow(setCookie: byQuery && !byCookie)
    }

    /// Compares in time that does not depend on where the first difference is.
    static func matches(_ offered: String, _ token: String) -> Bool {
        let a = Array(offered.utf8)
        let b = Array(token.utf8)
        guard a.count == b.count, !b.isEmpty else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    static func queryToken(_ target: String) -> String? {
        WebQuery.parse(target)["token"]
    }

    static func cookieToken(_ header: String) -> String? {
        for item in header.split(separator: ";") {
            let parts = item.trimmingWhitespace().split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == cookieName { return String(parts[1]) }
        }
        return nil
    }

    /// `http(s)://HOST[:PORT]` (and a Referer's path after it) names the host the request was sent to.
    static func sameOrigin(_ source: String, host: String) -> Bool {
        let rest: Substring
        if source.hasPrefix("http://") {
            rest = source.dropFirst("http://".count)
        } else if source.hasPrefix("https://") {
            rest = source.dropFirst("https://".count)
        } else {
            return false
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.lowercased() == host.lowercased()
    }
}
