import Testing

@testable import VitrineCore

/// The `web` section, the query of a request and the control commands the web remote adds.
@Suite struct WebSettingsTests {
    static func web(_ text: String) throws(ConfigError) -> WebSettings? {
        try Settings.parse("{\n\"web\": \(text)\n}", file: "frame.json").web
    }

    @Test func theSectionTurnsItOnWithDefaults() throws {
        #expect(try Settings.parse("{}", file: "frame.json").web == nil)
        let web = try #require(try Self.web("{}"))
        #expect(web.address == "0.0.0.0")
        #expect(web.port == 8080)
        #expect(web.uploadLimitMiB == 100)
        #expect(web.freeSpaceFloorMiB == 256)
        #expect(web.certFile == nil && web.publicURL == nil)
    }

    @Test func badValuesAreRefusedWithTheirLineAndField() {
        let cases: [(String, String, String)] = [
            ("{\"address\": \"frame.lan\"}", "web.address", "not an IPv4 address"),
            ("{\"address\": \"1.2.3.400\"}", "web.address", "not an IPv4 address"),
            ("{\"port\": 0}", "web.port", ""),
            ("{\"certFile\": \"cert.pem\"}", "web.keyFile", "needs both"),
            ("{\"uploadLimitMiB\": 0}", "web.uploadLimitMiB", ""),
            ("{\"publicURL\": \"frame.lan\"}", "web.publicURL", "http://"),
            ("{\"pages\": \"\"}", "web.pages", "must not be empty"),
            ("{\"colour\": 1}", "web.colour", ""),
        ]
        for (text, field, words) in cases {
            do {
                _ = try Self.web(text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.line == 2, "\(text): \(error)")
                #expect("\(error)".contains(field), "\(text): \(error)")
                #expect("\(error)".contains(words), "\(text): \(error)")
            }
        }
    }

    @Test func filesAreTakenFromTheConfigFilesFolder() throws {
        var settings = WebSettings()
        settings.certFile = "tls/cert.pem"
        settings.keyFile = "/etc/ssl/key.pem"
        settings.pages = "web"
        let resolved = settings.resolved(relativeTo: "/etc/vitrine")
        #expect(resolved.certFile == "/etc/vitrine/tls/cert.pem")
        #expect(resolved.keyFile == "/etc/ssl/key.pem")
        #expect(resolved.pages == "/etc/vitrine/web")
        #expect(try Self.web("{\"publicURL\": \"https://frame.lan:8443/\"}")?.publicURL == "https://frame.lan:8443")
    }

    @Test func theQueryIsDecodedAndTheFirstValueWins() {
        let query = WebQuery.parse("/api/photos?category=Beach%20Days&name=a+b%2Fc.jpg&name=second&flag&bad=%zz%4")
        #expect(query["category"] == "Beach Days")
        #expect(query["name"] == "a b/c.jpg")
        #expect(query["flag"] == "")
        #expect(query["bad"] == "%zz%4")
        #expect(WebQuery.parse("/api/status").isEmpty)
        #expect(WebQuery.parse("/?token=%C3%A9")["token"] == "é")
    }

    @Test func theControlCommandsTheRemoteAdds() {
        #expect(ControlCommand.parse("token rotate") == .rotateToken)
        #expect(ControlCommand.parse("token") == nil)
        #expect(ControlCommand.refusal("token now").contains("token takes rotate"))
        #expect(ControlCommand.parse("category \"\"") == .category(.named("")))
    }
}
