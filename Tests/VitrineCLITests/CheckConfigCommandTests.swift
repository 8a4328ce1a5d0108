import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

@Suite struct CheckConfigCommandTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
        RecordingConsole.run(arguments)
    }

    @Test func theShippedFilesAreValidAndExplained() {
        let result = run([
            "check-config", "\(repositoryRoot)/Config/vitrine.json", "\(repositoryRoot)/Config/devices.json",
        ])
        #expect(result.status == 0)
        #expect(result.errors.isEmpty)
        #expect(result.output.contains("Config/vitrine.json: valid player config"))
        #expect(result.output.contains("  library           \(repositoryRoot)/Config/sample-library: 3 categories"))
        #expect(result.output.contains("  interval          10 s (set)"))
        #expect(result.output.contains("  metricsFile       none (default)"))
        #expect(result.output.contains("  positionFile      "))
        #expect(result.output.contains("Config/devices.json: valid device table, 17 profiles"))
        #expect(result.output.contains("  rpi-touch-display-2: 720x1280 on DSI -> compose 1280x720, rotation 90"))
    }

    @Test func buttonsAndPresenceAreExplained() throws {
        try folder.write(
            "frame.json",
            text: """
                {"deviceTable": "\(repositoryRoot)/Config/devices.json",
                 "gpio": {"buttons": [{"line": "GPIO17", "action": "next", "longPress": "nextCategory"},
                                      {"chip": "gpiochip0", "offset": 27, "action": "screen"}]},
                 "presence": {"sensor": {"line": "GPIO4"}, "offAfter": 10}}
                """)
        let result = run(["check-config", "\(folder.path)/frame.json"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(
            result.output.contains(
                "  gpio              GPIO17=next/long nextCategory gpiochip0 line 27=screen, long press 1 s (set)"),
            "\(result.output)")
        #expect(
            result.output.contains("  presence          screen off after 10 min without motion on GPIO4 or input (set)")
        )
        let plain = run(["check-config", "\(repositoryRoot)/Config/vitrine.json"])
        #expect(plain.output.contains("  presence          off (the screen stays on whoever is there) (default)"))
    }

    @Test func theBrokerIsExplainedAndAPasswordOthersCanReadIsRefused() throws {
        let secret = try folder.write("mqtt.secret", text: "frame\npw\n")
        chmod(secret, 0o600)
        try folder.write(
            "frame.json",
            text: """
                {"deviceTable": "\(repositoryRoot)/Config/devices.json",
                 "mqtt": {"host": "broker.lan", "id": "hall", "groups": ["lobby"], "credentialsFile": "mqtt.secret"}}
                """)
        let result = run(["check-config", "\(folder.path)/frame.json"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(
            result.output.contains(
                "  mqtt              broker.lan:1883 as hall, user and password from \(secret) (set)"),
            "\(result.output)")
        #expect(result.output.contains("    commands on vitrine/hall/cmd, vitrine/all/cmd, vitrine/group/lobby/cmd"))
        #expect(result.output.contains("    Home Assistant discovery under homeassistant/ as vitrine_hall"))
        chmod(secret, 0o644)
        let exposed = run(["check-config", "\(folder.path)/frame.json"])
        #expect(exposed.status == 1)
        #expect(
            exposed.errors.contains(
                "frame.json: mqtt: credentials file \(secret): others can read or write it (mode 644); chmod o-rwx it"))
        let plain = run(["check-config", "\(repositoryRoot)/Config/vitrine.json"])
        #expect(plain.output.contains("  mqtt              off (no broker) (default)"))
    }

    @Test func sourcesAreExplainedAndALoginOthersCanReadIsRefused() throws {
        let login = try folder.write("nextcloud.login", text: "anna\napp-password\n")
        chmod(login, 0o600)
        try folder.write(
            "frame.json",
            text: """
                {"deviceTable": "\(repositoryRoot)/Config/devices.json",
                 "sources": [{"kind": "webdav", "url": "https://cloud.example.com/remote.php/dav/files/anna/Frame/",
                              "credentialsFile": "nextcloud.login", "category": "Family", "bandwidthKiBps": 500},
                             {"name": "shared", "kind": "webdav", "url": "https://cloud.example.com/s/XyZ",
                              "subfolderCategories": true, "caFile": "missing-ca.pem", "interval": 3600}]}
                """)
        let result = run(["check-config", "\(folder.path)/frame.json"])
        #expect(result.status == 1)
        #expect(
            result.output.contains("  sources           2, synced by vitrine sync --once (set)"), "\(result.output)")
        #expect(
            result.output.contains(
                "    Family: webdav https://cloud.example.com/remote.php/dav/files/anna/Frame into Family, every 900 s, "
                    + "login from \(login), at most 500 KiB/s"), "\(result.output)")
        #expect(
            result.output.contains(
                "    shared: webdav https://cloud.example.com/public.php/webdav (the share link XyZ) into one category "
                    + "per subfolder (photos at the top into shared), every 3600 s, no login, CA "
                    + "\(folder.path)/missing-ca.pem"), "\(result.output)")
        #expect(
            result.errors.contains(
                "frame.json: sources: shared: caFile \(folder.path)/missing-ca.pem cannot be read"), "\(result.errors)")
        chmod(login, 0o644)
        let exposed = run(["check-config", "\(folder.path)/frame.json"])
        #expect(
            exposed.errors.contains(
                "sources: Family: credentials file \(login): others can read or write it (mode 644)"),
            "\(exposed.errors)")
    }

    @Test func anErrorNamesFileLineAndKeyAndTheOtherFilesAreStillChecked() throws {
        try folder.write("bad.json", text: "{\n  \"interval\": 5,\n  \"fit\": \"stretch\"\n}\n")
        try folder.write(
            "devices.json",
            text: """
                {"version": 1, "fallback": {},
                 "profiles": [{"id": "a", "name": "A", "match": {"mode": "800x480"}, "compose": "800x480",
                               "rendition": "800x480", "memoryBudgetMiB": 48},
                              {"id": "a", "name": "B", "match": {"mode": "1024x600"}, "compose": "1024x600",
                               "rendition": "1024x600", "memoryBudgetMiB": 64}]}
                """)
        try folder.write("good.json", text: "{\"library\": \"nowhere\", \"deviceTable\": \"devices.json\"}")
        let result = run([
            "check-config", "\(folder.path)/bad.json", "\(folder.path)/devices.json", "\(folder.path)/good.json",
        ])
        #expect(result.status == 1)
        #expect(
            result.errors.contains(
                "\(folder.path)/bad.json:3: fit: \"stretch\" is not allowed (expected one of: \"contain\", \"cover\", "
                    + "\"contain-blur\")"))
        #expect(result.errors.contains("\(folder.path)/devices.json:4: profiles[1] (id \"a\").id: duplicate id"))
        // good.json itself parses; its library is missing (a warning) and its device table is broken (an error).
        #expect(result.output.contains("\(folder.path)/good.json: valid player config"))
        #expect(result.output.contains("warning: library \(folder.path)/nowhere is not a folder"))
    }
}
