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

/// `vitrine doctor --root DIR` on an installation laid out in a folder (a frame's SD card, as it would be mounted):
/// what it says of the accounts, devices, config, library and state, and its exit status. The running machine's
/// side (the screen, the network, the journal) is `make vm-service`'s, on a real installation.
@Suite struct DoctorTests {
    let folder: TemporaryFolder
    var root: String { folder.path }

    init() throws {
        folder = try TemporaryFolder()
        try folder.write(
            "lib/systemd/system/vitrine.service",
            text: """
                [Service]
                ExecStart=/usr/bin/vitrine play --config /etc/vitrine/vitrine.json
                User=vitrine
                StateDirectory=vitrine

                """)
        try folder.write(
            "etc/passwd", text: "root:x:0:0:root:/root:/bin/bash\nvitrine:x:999:999::/nonexistent:/usr/sbin/nologin\n")
        try folder.write("etc/group", text: "root:x:0:\nvideo:x:44:\ninput:x:105:vitrine\nvitrine:x:999:\n")
        try folder.write("etc/vitrine/vitrine.json", text: "{\"library\": \"/srv/vitrine\"}\n")
        try folder.write("srv/vitrine/Trips/a.jpg", [0xFF, 0xD8])
        try FileBytes.createDirectories("\(root)/var/lib/vitrine")
        _ = chown("\(root)/var/lib/vitrine", 999, 999)
        // The screen's card, as udev makes it: the video group's, not open to others.
        try folder.write("dev/dri/card0", [])
        _ = chown("\(root)/dev/dri/card0", 0, 44)
        _ = chmod("\(root)/dev/dri/card0", 0o660)
        try folder.write("dev/input/event0", [])
        _ = chown("\(root)/dev/input/event0", 0, 105)
        _ = chmod("\(root)/dev/input/event0", 0o660)
    }

    func doctor(_ extra: [String] = []) -> (status: Int32, report: [String: JSONValue], text: String) {
        let json = RecordingConsole.run(["doctor", "--root", root, "--json"] + extra)
        let text = RecordingConsole.run(["doctor", "--root", root] + extra).output
        guard let value = try? JSONParser.parse(json.output), case .object(let members) = value.kind else {
            return (json.status, [:], text)
        }
        return (json.status, Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }), text)
    }

    /// The findings as `topic verdict: text`.
    func findings(_ report: [String: JSONValue]) -> [String] {
        guard case .array(let items)? = report["findings"]?.kind else { return [] }
        return items.compactMap { item in
            guard case .object(let members) = item.kind else { return nil }
            let fields = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
            guard case .string(let topic)? = fields["topic"]?.kind,
                case .string(let verdict)? = fields["verdict"]?.kind,
                case .string(let text)? = fields["text"]?.kind
            else { return nil }
            return "\(topic) \(verdict): \(text)"
        }
    }

    @Test func theUserOutsideTheVideoGroupIsAProblemWithItsFix() {
        let (status, report, text) = doctor()
        #expect(status == 1)
        #expect(report["healthy"]?.kind == .bool(false))
        let found = findings(report)
        #expect(
            found.contains("groups problem: vitrine is not in the video group, so it cannot use the screen"), "\(found)"
        )
        #expect(text.contains("fix: sudo usermod -aG video vitrine && sudo systemctl restart vitrine"), "\(text)")
        #expect(found.contains("config ok: /etc/vitrine/vitrine.json is valid"), "\(found)")
        #expect(found.contains("library ok: /srv/vitrine with 1 category"), "\(found)")
        #expect(text.hasSuffix("1 problem found; the fixes are above.\n"), "\(text)")
    }

    @Test func aHealthyInstallationIsAllWell() throws {
        try folder.write("etc/group", text: "root:x:0:\nvideo:x:44:vitrine\ninput:x:105:vitrine\nvitrine:x:999:\n")
        let (status, report, text) = doctor()
        #expect(status == 0, "\(text)")
        #expect(report["healthy"]?.kind == .bool(true))
        #expect(findings(report).contains { $0.hasPrefix("groups ok:") })
        #expect(text.hasSuffix("All is well.\n"), "\(text)")
    }

    @Test func eachBrokenPartIsNamedWithItsFix() throws {
        try folder.write("etc/group", text: "root:x:0:\nvideo:x:44:vitrine\ninput:x:105:vitrine\nvitrine:x:999:\n")
        // The library gone, the state folder not the user's, a config with a mistake.
        _ = rename("\(root)/srv/vitrine", "\(root)/srv/elsewhere")
        _ = chown("\(root)/var/lib/vitrine", 0, 0)
        _ = chmod("\(root)/var/lib/vitrine", 0o755)
        var (status, report, text) = doctor()
        #expect(status == 1)
        var found = findings(report)
        #expect(found.contains("library problem: the photo folder /srv/vitrine is not there"), "\(found)")
        #expect(text.contains("fix: sudo mkdir -p /srv/vitrine && sudo chown vitrine: /srv/vitrine"), "\(text)")
        #expect(found.contains { $0.hasPrefix("state problem: vitrine cannot write its state in /var/lib/vitrine") })
        #expect(text.contains("fix: sudo chown -R vitrine: /var/lib/vitrine"), "\(text)")

        try folder.write("etc/vitrine/vitrine.json", text: "{\"library\": \"/srv/vitrine\",\n \"intervl\": 5}\n")
        (status, report, text) = doctor()
        found = findings(report)
        #expect(status == 1)
        #expect(
            found.contains { $0.hasPrefix("config problem: /etc/vitrine/vitrine.json:2") && $0.contains("intervl") },
            "\(found)")
        // The user gone.
        try folder.write("etc/passwd", text: "root:x:0:0:root:/root:/bin/bash\n")
        (status, report, text) = doctor()
        #expect(
            findings(report).contains(
                "user problem: the service user vitrine does not exist, so the service cannot start"))
        #expect(text.contains("fix: sudo adduser --system --group --no-create-home vitrine"), "\(text)")
    }

    /// A state partition at its floor (32 MiB, 5% of a larger disk, half of a small one) is a problem that says
    /// what the renditions take and how to free it. The partition is a real 8 MiB tmpfs over the state folder.
    @Test func aStateDiskAtItsFloorIsAProblemNamingTheRenditions() throws {
        try folder.write("etc/group", text: "root:x:0:\nvideo:x:44:vitrine\ninput:x:105:vitrine\nvitrine:x:999:\n")
        let state = "\(root)/var/lib/vitrine"
        guard let disk = TemporaryMount(tmpfsAt: state, megabytes: 8, refused: { Issue.record("\($0)") }) else {
            return
        }
        defer { disk.unmount() }
        _ = chown(state, 999, 999)
        var (status, report, text) = doctor()
        #expect(status == 0, "\(text)")
        try folder.write("var/lib/vitrine/renditions/Trips/a@320x200.jpg", [UInt8](repeating: 7, count: 6 << 20))
        (status, report, text) = doctor()
        #expect(status == 1)
        let found = findings(report)
        #expect(
            found.contains(
                "disk problem: only 2.0 MiB of 8.0 MiB is free where the state is kept (renditions take 6.0 MiB of it): "
                    + "the player makes no more renditions there, and saving the position may fail"), "\(found)")
        #expect(text.contains("fix: sudo rm -r /var/lib/vitrine/renditions (they are made again as needed)"), "\(text)")
        #expect(found.contains { $0.hasPrefix("state note: /var/lib/vitrine is in memory (tmpfs)") }, "\(found)")
    }
}
