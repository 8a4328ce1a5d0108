import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A reload asked through the web remote itself runs inside libmicrohttpd's request callback, where the server
/// must not be stopped. Twenty reloads with a changed `web` section, through the API: settings the server can take
/// are taken in place (the reload is answered), a new port restarts it once the callback has returned. Under
/// `make test-asan` the player is the AddressSanitizer build, so a server freed under its own callback fails the
/// exit status.
@Suite(.serialized) struct WebReloadEndToEndTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
        let size = Size(width: 64, height: 48)
        try folder.write(
            "library/A/a.jpg", try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.red, size: size), size: size))
    }

    /// One HTTP request over loopback; the answer as text ("" when nobody answered).
    static func request(port: UInt16, _ text: String) -> String {
        String(decoding: Loopback.roundTrip(port: port, Array(text.utf8), timeoutSeconds: 10), as: UTF8.self)
    }

    func writeConfig(port: UInt16, uploadLimit: Int) throws {
        try folder.write(
            "vitrine.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 600,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "160x96"},
                 "controlSocket": "control.sock", "positionFile": "", "headerCacheFolder": "",
                 "renditionCacheFolder": "",
                 "web": {"address": "127.0.0.1", "port": \(port), "pages": "\(repositoryRoot)/web",
                         "uploadLimitMiB": \(uploadLimit)}}
                """)
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func twentyReloadsWithAChangedWebSectionThroughTheAPI() throws {
        var port = Loopback.freePort()
        try writeConfig(port: port, uploadLimit: 10)
        let state = "\(folder.path)/state"
        let player = try PlayEndToEndTests.Running(
            arguments: ["play", "--config", "\(folder.path)/vitrine.json"], log: "\(folder.path)/player.log",
            environment: ["STATE_DIRECTORY": state])
        var token = ""
        _ = Loopback.eventually(within: 20) {
            token = ((try? FileBytes.readText("\(state)/web-token")) ?? "").trimmingWhitespace()
            return !token.isEmpty
        }
        try #require(!token.isEmpty, "no web token: \(player.output)")
        func status(_ port: UInt16) -> Bool {
            Self.request(
                port: port,
                "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
            ).hasPrefix("HTTP/1.1 200")
        }
        func reloads() -> Int { player.output.split(separator: "\n").filter { $0.contains("config reloaded") }.count }
        // The token is written before the server listens: a reload sent in between would be refused.
        try #require(Loopback.eventually(within: 20) { status(port) }, "the remote never answered: \(player.output)")
        var answered = 0
        for round in 1...20 {
            // Every fifth a new port: the server is made anew, after the callback that asked for it.
            let moves = round % 5 == 0
            let next = moves ? Loopback.freePort() : port
            try writeConfig(port: next, uploadLimit: 10 + round)
            let body = "{\"command\":\"reload\"}"
            let answer = Self.request(
                port: port,
                "POST /api/command HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                    + body)
            if answer.hasPrefix("HTTP/1.1 200") {
                answered += 1
            } else {
                #expect(moves, "round \(round): the reload kept the port and was not answered: \(answer)")
            }
            #expect(Loopback.eventually(within: 20) { reloads() == round }, "round \(round): \(player.output)")
            port = next
            let up = Loopback.eventually(within: 10) { status(port) }
            #expect(up, "round \(round): the remote answers on port \(port) after the reload")
            #expect(kill(player.pid, 0) == 0, "round \(round): the player is still running")
        }
        // The reloads that kept the server were answered; those that moved it may lose their answer with the
        // old socket.
        #expect(answered >= 16, "\(answered) of 20 reloads answered")
        #expect(player.stop() == 0, "\(player.output)")
        #expect(reloads() == 20, "\(player.output)")
    }
}
