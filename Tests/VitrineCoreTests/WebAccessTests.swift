import Testing

@testable import VitrineCore

/// The web remote's door: the token, the cookie and requests from other sites.
@Suite struct WebAccessTests {
    static let token = "k3Yq9vP2mZ"

    static func decide(
        _ method: String = "GET", _ target: String = "/", _ headers: [String: String] = [:]
    ) -> WebAccess.Decision {
        var all = ["host": "frame.lan:8080"]
        all.merge(headers) { _, new in new }
        return WebAccess.decide(WebAccess.Request(method: method, target: target, headers: all), token: Self.token)
    }

    @Test func withoutTheTokenNothingIsServed() {
        #expect(Self.decide() == .unauthorized)
        #expect(Self.decide("GET", "/?token=wrong") == .unauthorized)
        #expect(Self.decide("GET", "/api/status", ["cookie": "vitrine_token=k3Yq9vP2m"]) == .unauthorized)
        #expect(Self.decide("GET", "/api/status", ["authorization": "Basic k3Yq9vP2mZ"]) == .unauthorized)
    }

    @Test func theQRCodesVisitSetsTheCookieWhichThenServes() {
        #expect(Self.decide("GET", "/?token=k3Yq9vP2mZ") == .allow(setCookie: true))
        #expect(
            Self.decide("GET", "/api/status", ["cookie": "theme=dark; vitrine_token=k3Yq9vP2mZ"])
                == .allow(setCookie: false))
        #expect(Self.decide("GET", "/metrics", ["authorization": "Bearer k3Yq9vP2mZ"]) == .allow(setCookie: false))
    }

    @Test func aChangeRidingOnTheCookieMustComeFromThePage() {
        let cookie = ["cookie": "vitrine_token=k3Yq9vP2mZ"]
        #expect(
            Self.decide("POST", "/api/command", cookie.merging(["origin": "http://frame.lan:8080"]) { $1 })
                == .allow(setCookie: false))
        #expect(
            Self.decide("POST", "/api/command", cookie.merging(["origin": "https://evil.example"]) { $1 })
                == .crossOrigin("https://evil.example"))
        #expect(Self.decide("DELETE", "/api/photos/A/a.jpg", cookie) == .crossOrigin("no Origin header"))
        #expect(
            Self.decide("POST", "/api/command", cookie.merging(["referer": "http://frame.lan:8080/?x=1"]) { $1 })
                == .allow(setCookie: false))
        // Another port on the same host is another origin.
        #expect(
            Self.decide("POST", "/api/command", cookie.merging(["origin": "http://frame.lan:9090"]) { $1 })
                == .crossOrigin("http://frame.lan:9090"))
        // A script with the bearer token needs no Origin: browsers never send that header by themselves.
        #expect(Self.decide("POST", "/api/command", ["authorization": "Bearer k3Yq9vP2mZ"]) == .allow(setCookie: false))
    }

    @Test func tokensAreComparedWhole() {
        #expect(WebAccess.matches("abc", "abc"))
        #expect(!WebAccess.matches("abd", "abc"))
        #expect(!WebAccess.matches("ab", "abc"))
        #expect(!WebAccess.matches("", ""))
    }
}
