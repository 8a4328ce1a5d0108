import CLinux
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

/// `vitrine play` as a user runs it: the real executable on a library made here, driven over its control socket,
/// with files added and deleted while it plays. The interval is long, so every change on screen comes from a
/// command and the test can wait for each one.
@Suite(.serialized) struct PlayEndToEndTests {
    static let binary = vitrineBinary

    let folder: TemporaryFolder
    let library: String
    let snapshots: String
    let socket: String

    static let cyan = RGBColor(red: 20, green: 210, blue: 220)
    static let magenta = RGBColor(red: 220, green: 30, blue: 200)

    init() throws {
        folder = try TemporaryFolder()
        library = "\(folder.path)/library"
        snapshots = "\(folder.path)/frames"
        socket = "\(folder.path)/control.sock"
        try photo("Alpha/a.jpg", JPEGFixture.red, Size(width: 320, height: 192))
        try photo("Alpha/b.jpg", JPEGFixture.green, Size(width: 120, height: 200))
        try photo("Alpha/c.jpg", JPEGFixture.blue, Size(width: 640, height: 384))
        try folder.write("library/Beta/bad.jpg", [])
        try photo("Beta/yellow.jpg", JPEGFixture.yellow, Size(width: 160, height: 96))
        try photo("Gamma/only.jpg", Self.cyan, Size(width: 100, height: 60))
        try folder.write(
            "vitrine.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 600, "transition": "none",
                 "display": {"backend": "headless", "headlessSize": "160x96"}, "controlSocket": "control.sock"}
                """)
    }

    func photo(_ name: String, _ color: RGBColor, _ size: Size) throws {
        try folder.write(
            "library/\(name)", try JPEGFixture.encode(rgb: JPEGFixture.solid(color, size: size), size: size))
    }

    /// A running player; stopped with SIGTERM by `stop()`.
    final class Running {
        let pid: pid_t
        let log: String

        init(arguments: [String], log: String, environment: [String: String] = [:]) throws {
            self.log = log
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            var argv: [UnsafeMutablePointer<CChar>?] =
                ([PlayEndToEndTests.binary] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            // The test process's environment, with `environment` set over it (only the player sees them).
            var inherited: [String] = []
            var entry = environ
            while let pointer = entry.pointee {
                let text = String(cString: pointer)
                if !environment.keys.contains(where: { text.hasPrefix($0 + "=") }) { inherited.append(text) }
                entry += 1
            }
            var envp: [UnsafeMutablePointer<CChar>?] =
                (inherited + environment.map { "\($0.key)=\($0.value)" }).map { strdup($0) } + [nil]
            defer { envp.forEach { free($0) } }
            let status = posix_spawn(&pid, PlayEndToEndTests.binary, &actions, nil, &argv, &envp)
            guard status == 0 else {
                throw FileError(path: PlayEndToEndTests.binary, operation: "spawn", errno: status)
            }
            self.pid = pid
        }

        /// SIGTERM, then the exit status (or -signal).
        func stop() -> Int32 {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            return status & 0x7F == 0 ? (status >> 8) & 0xFF : -(status & 0x7F)
        }

        var output: String { (try? FileBytes.readText(log)) ?? "" }
    }

    /// The exit status of a process that should end by itself, polled every 20 ms for up to `seconds`; nil (and
    /// the process killed and reaped) when it did not end in time.
    static func exitStatus(of pid: pid_t, within seconds: Double) -> Int32? {
        var status: Int32 = 0
        for _ in 0..<Int(seconds * 50) {
            if waitpid(pid, &status, WNOHANG) == pid { return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return nil
    }

    /// Polls `condition` every 20 ms for up to `seconds` (20 s: debug builds on a loaded machine are slow).
    func eventually(_ what: String, within seconds: Int = 20, _ condition: () -> Bool) -> Bool {
        for _ in 0..<(seconds * 50) {
            if condition() { return true }
            usleep(20_000)
        }
        Issue.record("timed out waiting for \(what)")
        return false
    }

    func presented() -> [[String: String]] {
        guard let text = try? FileBytes.readText("\(snapshots)/presented.jsonl") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let value = try? JSONParser.parse(String(line)), case .object(let members) = value.kind else {
                return nil
            }
            var fields: [String: String] = [:]
            for (key, member) in members {
                switch member.kind {
                case .string(let text): fields[key] = text
                case .number(let number): fields[key] = String(number)
                default: fields[key] = ""
                }
            }
            return fields
        }
    }

    func ctl(_ command: String) -> String {
        switch CtlCommand.exchange(command, path: socket) {
        case .success(let answer): return answer
        case .failure(let error): return "failed: \(error)"
        }
    }

    /// Sends a command and waits for the next presented frame; returns its record.
    @discardableResult
    func showNext(after command: String) -> [String: String]? {
        let before = presented().count
        #expect(ctl(command) == "ok", "\(command)")
        guard eventually("a frame after \(command)", { presented().count > before }) else { return nil }
        return presented().last
    }

    func pixel(ofSnapshot sequence: Int, x: Int, y: Int) throws -> RGBColor {
        let name = String(sequence)
        let path = "\(snapshots)/\(String(repeating: "0", count: 6 - name.count))\(name).ppm"
        let bytes = try FileBytes.read(path)
        let header = Array("P6\n160 96\n255\n".utf8)
        #expect(Array(bytes.prefix(header.count)) == header)
        let offset = header.count + (y * 160 + x) * 3
        return RGBColor(red: bytes[offset], green: bytes[offset + 1], blue: bytes[offset + 2])
    }

    static func near(_ a: RGBColor, _ b: RGBColor) -> Bool {
        abs(Int(a.red) - Int(b.red)) <= 8 && abs(Int(a.green) - Int(b.green)) <= 8
            && abs(Int(a.blue) - Int(b.blue)) <= 8
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func playsNavigatesSwitchesAndFollowsTheFolder() throws {
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/vitrine.json", "--snapshots", snapshots],
            log: "\(folder.path)/play.log")
        defer { _ = player.stop() }
        guard eventually("the first slide", { presented().count == 1 }) else { return }
        #expect(presented().first?["category"] == "Alpha" && presented().first?["slide"] == "a")
        #expect(Self.near(try pixel(ofSnapshot: 1, x: 80, y: 48), JPEGFixture.red))
        var status = stat()
        #expect(stat(socket, &status) == 0 && status.st_mode & 0o777 == 0o660)

        // next: the portrait photo, centred on black.
        #expect(showNext(after: "next")?["slide"] == "b")
        #expect(Self.near(try pixel(ofSnapshot: 2, x: 80, y: 48), JPEGFixture.green))
        #expect(try pixel(ofSnapshot: 2, x: 2, y: 48) == .black)
        #expect(showNext(after: "prev")?["slide"] == "a")

        // pause and resume show in status; the picture does not change.
        #expect(ctl("pause") == "ok")
        #expect(ctl("status").contains("\"paused\":[\"user\"]"))
        #expect(ctl("resume") == "ok")
        #expect(ctl("status").contains("\"paused\":[]"))
        #expect(ctl("jump").hasPrefix("error: unknown command \"jump\""))

        // Beta: its broken photo is skipped with one log line, the good one shown.
        let beta = showNext(after: "category Beta")
        #expect(beta?["category"] == "Beta" && beta?["slide"] == "yellow")
        #expect(player.output.contains("skipped \(library)/Beta/bad.jpg: empty file (0 bytes)"))

        // A photo copied in (written under a hidden name, then renamed, as rsync does) joins the show.
        let size = Size(width: 96, height: 96)
        try folder.write(
            "library/Beta/.zebra.jpg.tmp",
            try JPEGFixture.encode(rgb: JPEGFixture.solid(Self.magenta, size: size), size: size))
        rename("\(library)/Beta/.zebra.jpg.tmp", "\(library)/Beta/zebra.jpg")
        #expect(eventually("zebra to be indexed", { ctl("status").contains("\"count\":3") }))
        let zebra = showNext(after: "next")
        #expect(zebra?["slide"] == "zebra")
        #expect(Self.near(try pixel(ofSnapshot: presented().count, x: 80, y: 48), Self.magenta))

        // Deleting the photo on screen: it stays until the show moves on, then the show goes on past it.
        unlink("\(library)/Beta/zebra.jpg")
        #expect(eventually("zebra to leave", { ctl("status").contains("\"count\":2") }))
        #expect(showNext(after: "next")?["slide"] == "yellow")

        // A new category folder appears and can be chosen.
        try photo("Delta/new.jpg", Self.cyan, Size(width: 160, height: 96))
        #expect(eventually("Delta to appear", { ctl("category Delta") == "ok" }))
        #expect(eventually("Delta to show", { presented().last?["category"] == "Delta" }))
        // Categories are in natural order: Alpha, Beta, Delta, Gamma.
        #expect(showNext(after: "category prev")?["category"] == "Beta")
        #expect(showNext(after: "category Gamma")?["category"] == "Gamma")

        // Clients that misbehave do not disturb the show.
        #expect(Self.misbehave(socket))
        #expect(showNext(after: "category Alpha")?["slide"] == "a")
        #expect(ctl("status").contains("\"category\":\"Alpha\""))

        #expect(player.stop() == 0)
        #expect(!FileBytes.exists(socket))
    }

    /// Only regular files are photos: a FIFO and a link to a device, named like photos, block nothing (with a FIFO
    /// the show once never reached its fourth slide) and the show goes round the real photos.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aFIFOOrADeviceNamedLikeAPhotoBlocksNothing() throws {
        #expect(mkfifo("\(library)/Alpha/b-fifo.jpg", 0o644) == 0)
        #expect(symlink("/dev/zero", "\(library)/Alpha/b-zero.jpg") == 0)
        let player = try Running(
            arguments: [
                "play", "--config", "\(folder.path)/vitrine.json", "--snapshots", snapshots, "--interval", "0.1",
                "--exit-after", "7",
            ], log: "\(folder.path)/play.log")
        #expect(eventually("seven slides", { presented().count >= 7 }))
        #expect(Set(presented().compactMap { $0["slide"] }) == ["a", "b", "c"])
        #expect(player.stop() == 0)
        #expect(!player.output.contains("b-fifo"), "\(player.output)")
    }

    /// A library on a USB stick or a NAS mounted late: its folder (and the folder above it) missing at start is
    /// waited for, played when it appears, and waited for again when it goes.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aLibraryMissingAtStartIsWaitedForAndPlayedWhenItAppears() throws {
        try folder.write(
            "late.json",
            text: """
                {"library": "usb/photos", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 600,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "160x96"},
                 "controlSocket": "late.sock"}
                """)
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/late.json", "--snapshots", snapshots],
            log: "\(folder.path)/late.log")
        #expect(eventually("the wait", { player.output.contains("usb/photos is not there; waiting for it") }))
        let size = Size(width: 160, height: 96)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.solid(Self.cyan, size: size), size: size)
        try folder.write("usb/photos/Late/x.jpg", jpeg)
        #expect(eventually("the late photo", { presented().contains { $0["slide"] == "x" } }))
        #expect(player.output.contains("usb/photos is there now"))
        // The stick is pulled: the show waits again, and plays what comes back.
        #expect(unlink("\(folder.path)/usb/photos/Late/x.jpg") == 0)
        #expect(rmdir("\(folder.path)/usb/photos/Late") == 0)
        #expect(rmdir("\(folder.path)/usb/photos") == 0)
        #expect(
            eventually(
                "the second wait",
                { player.output.split(separator: "\n").filter { $0.contains("waiting for it") }.count == 2 }))
        try folder.write("usb/photos/Back/y.jpg", jpeg)
        #expect(eventually("the photo back", { presented().contains { $0["slide"] == "y" } }))
        #expect(player.stop() == 0)
    }

    /// Showing one slide for ten minutes costs no CPU: nothing polls, and the player's own reads of the library
    /// (the category list, the index reading headers for `newest` order) wake nothing. The inotify watch once took
    /// each read as a change and asked for the next: the idle player spun a whole core. CPU time, not wall time.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func anIdlePlayerUsesNoCPU() throws {
        let size = Size(width: 160, height: 96)
        try photo("Alpha/a.jpg", Self.cyan, size)
        try photo("Alpha/b.jpg", Self.magenta, size)
        try photo("Beta/c.jpg", Self.cyan, size)
        try folder.write(
            "idle.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 600,
                 "order": "newest", "transition": "none", "startCategory": "Alpha",
                 "display": {"backend": "headless", "headlessSize": "160x96"}, "controlSocket": "idle.sock"}
                """)
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/idle.json", "--snapshots", snapshots],
            log: "\(folder.path)/idle.log")
        #expect(eventually("the first slide", { !presented().isEmpty }))
        /// User and system time of the player so far, in clock ticks (proc(5): fields 14 and 15).
        func ticks() -> Int {
            guard let text = try? FileBytes.readText("/proc/\(player.pid)/stat"),
                let end = text.lastIndex(of: ")")
            else { return 0 }
            let fields = text[text.index(after: end)...].split(separator: " ")
            // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
            return fields.count > 12 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
        }
        usleep(1_000_000)
        let before = ticks()
        usleep(3_000_000)
        let used = Double(ticks() - before) / Double(sysconf(Int32(_SC_CLK_TCK)))
        #expect(used < 0.3, "the idle player used \(used) s of CPU in 3 s")
        #expect(player.stop() == 0)
    }

    /// SD cards wear with every write: at ten slides a second the position is saved once (the first slide) in the
    /// first few seconds, not once a slide (the default spacing is half an hour); the screen going off (the end of
    /// a frame's day) saves it at once, and at exit it names the slide on screen.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func thePositionIsSavedAtMostOnceAnIntervalWhenTheScreenGoesOffAndAtExit() throws {
        let position = "\(folder.path)/state/position.json"
        mkdir("\(folder.path)/state", 0o755)
        try folder.write(
            "fast.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 0.1,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "160x96"},
                 "controlSocket": "control.sock", "positionFile": "state/position.json", "startCategory": "Alpha"}
                """)
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/fast.json", "--snapshots", snapshots],
            log: "\(folder.path)/fast.log")
        func inode() -> UInt? {
            var status = stat()
            return stat(position, &status) == 0 ? UInt(status.st_ino) : nil
        }
        #expect(eventually("the first save", { inode() != nil }))
        let first = inode()
        #expect(eventually("twenty slides", { presented().count >= 20 }))
        #expect(inode() == first, "saved again within seconds")
        #expect(ctl("screen off") == "ok")
        #expect(eventually("the save as the screen goes off", { inode() != first }))
        #expect(ctl("screen on") == "ok")
        #expect(player.stop() == 0)
        let last = presented().last?["slide"]
        let saved = try FileBytes.readText(position)
        #expect(last.map { saved.contains("\"slide\":\"\($0)\"") } == true, "\(saved) vs \(String(describing: last))")
    }

    /// A control socket path that names a user's file (a typo in the config) is refused with one line, the file
    /// stays, and the show goes on without the socket, as it does without MQTT or the web remote.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aControlSocketPathThatIsARegularFileIsLeftAlone() throws {
        try folder.write("control.sock", text: "my notes\n")
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/vitrine.json"], log: "\(folder.path)/notes.log")
        #expect(eventually("the show goes on", { player.output.contains("playing ") }))
        #expect(
            player.output.contains("\(socket): cannot use it as the control socket: it is not a socket"),
            "\(player.output)")
        #expect(player.stop() == 0)
        #expect(try FileBytes.readText(socket) == "my notes\n")
    }

    /// The socket is bound beside its path and renamed into place once it listens (so a client that waits for the
    /// path is never refused): a user's file with that staging name is left alone, and the socket still works.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aUsersFileNamedLikeTheSocketsStagingNameIsLeftAlone() throws {
        try folder.write("control.sock~", text: "my other notes\n")
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/vitrine.json"], log: "\(folder.path)/staging.log")
        #expect(eventually("the control socket", { FileBytes.exists(socket) }))
        #expect(ctl("status").contains("\"category\""))
        var status = stat()
        #expect(stat(socket, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK && status.st_mode & 0o777 == 0o660)
        #expect(player.stop() == 0)
        #expect(try FileBytes.readText("\(socket)~") == "my other notes\n")
        #expect(!FileBytes.exists(socket))
    }

    /// The binary stands alone: started from an empty folder with no config file anywhere it looks, it plays the
    /// library it is given with the device table compiled in.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func withNoConfigFileItPlaysWithBuiltInDefaults() throws {
        mkdir("\(folder.path)/empty", 0o755)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let log = "\(folder.path)/alone.log"
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // From the empty folder (a shell changes to it: glibc's addchdir is not in Swift's view of it).
        let arguments = [
            "/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", "\(folder.path)/empty", Self.binary, "play", "--library",
            library, "--display", "headless:160x96", "--control", socket,
            "--snapshots", snapshots, "--exit-after", "2", "--interval", "0.2",
        ]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // Without VITRINE_CONFIG: only /etc/vitrine and ./Config are looked in.
        let variables: [String] = ["PATH=/usr/bin:/bin"]
        var environment: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { environment.forEach { free($0) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, &environment) == 0)
        let status = Self.exitStatus(of: pid, within: 20)
        let output = (try? FileBytes.readText(log)) ?? ""
        #expect(status == 0, "\(output)")
        #expect(presented().count >= 2)
        #expect(output.contains("profile fallback-160x96"), "\(output)")
    }

    /// Half a line then a hang-up, then a flood without newlines: both are dropped quietly.
    static func misbehave(_ path: String) -> Bool {
        func connected() -> Int32? {
            let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return nil }
            guard vitrine_unix_connect_or_bind(descriptor, path, 0) == 0 else {
                close(descriptor)
                return nil
            }
            return descriptor
        }
        guard let half = connected() else { return false }
        var partial = Array("nex".utf8)
        _ = send(half, &partial, partial.count, Int32(MSG_NOSIGNAL))
        close(half)
        guard let flood = connected() else { return false }
        var junk = [UInt8](repeating: 0x41, count: 8192)
        _ = send(flood, &junk, junk.count, Int32(MSG_NOSIGNAL))
        var answer = [UInt8](repeating: 0, count: 256)
        let count = recv(flood, &answer, answer.count, 0)
        close(flood)
        return count > 0 && String(decoding: answer[0..<count], as: UTF8.self).hasPrefix("error: line longer than")
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func signalsPauseReloadAndResume() throws {
        let config = "\(folder.path)/vitrine.json"
        let player = try Running(
            arguments: ["play", "--config", config, "--snapshots", snapshots, "--stats"], log: "\(folder.path)/play.log"
        )
        defer { _ = player.stop() }
        guard eventually("the first slide", { presented().count == 1 }) else { return }
        // The stats line is logged once the frame is written, so it may come a moment after the snapshot.
        #expect(eventually("the stats line", { player.output.contains("stats: slide Alpha/a decode ") }))
        #expect(player.output.contains(" MiB MemAvailable "))

        kill(player.pid, SIGUSR1)
        #expect(eventually("a pause", { ctl("status").contains("\"paused\":[\"user\"]") }))
        kill(player.pid, SIGUSR1)
        #expect(eventually("the end of the pause", { ctl("status").contains("\"paused\":[]") }))

        // A broken config is refused and the show goes on with the old one.
        let good = try FileBytes.readText(config)
        try folder.write("vitrine.json", text: "{\"interval\": \"soon\"}")
        kill(player.pid, SIGHUP)
        #expect(
            eventually("the refusal", { player.output.contains("config reload refused, keeping the running settings") })
        )
        #expect(player.output.contains("vitrine.json:1: interval: expected a number, found a string"))
        #expect(ctl("status").contains("\"category\":\"Alpha\""))
        try folder.write("vitrine.json", text: good.split(separator: "600").joined(separator: "500"))
        kill(player.pid, SIGHUP)
        #expect(eventually("the reload", { player.output.contains("config reloaded from \(config)") }))

        // Stopped and continued (as after a suspend of the process): the slide gets a full interval again.
        kill(player.pid, SIGSTOP)
        usleep(100_000)
        kill(player.pid, SIGCONT)
        #expect(eventually("the resume", { player.output.contains("resumed after sleep") }))
        #expect(presented().count == 1)
        #expect(player.stop() == 0)
    }

    @Test func aBudgetTooSmallForThePanelIsRefusedAtStart() throws {
        try folder.write(
            "small.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "memoryBudgetMiB": 8,
                 "display": {"backend": "headless", "headlessSize": "1920x1080"}, "controlSocket": "small.sock"}
                """)
        let console = RecordingConsole()
        let status = VitrineCommand.run(arguments: ["play", "--config", "\(folder.path)/small.json"], console: console)
        #expect(status == 1)
        #expect(
            console.errors
                == "vitrine play: memory budget 8 MiB (memoryBudgetMiB) is below the 23.7 MiB that two 1920x1080 "
                + "scanout buffers and one 1920x1080 frame need\n")
    }

    /// Crossfades and portrait pairs as the player shows them: every fade step a clean mix, the last step the new
    /// slide exactly as `vitrine render` draws it, the interval counted from the fade's end; a pair side by side.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func fadesBetweenSlidesAndShowsPortraitPairs() throws {
        let size = Size(width: 160, height: 96)
        try photo("Fade/1-red.jpg", JPEGFixture.red, size)
        try photo("Fade/2-blue.jpg", JPEGFixture.blue, size)
        try photo("Pairs/p1.jpg", JPEGFixture.red, Size(width: 60, height: 100))
        try photo("Pairs/p2.jpg", JPEGFixture.blue, Size(width: 60, height: 100))
        try folder.write(
            "fade.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 0.4,
                 "transition": "fade", "transitionSeconds": 0.5, "pairPortraits": true, "startCategory": "Fade",
                 "display": {"backend": "headless", "headlessSize": "160x96"}, "controlSocket": "control.sock"}
                """)
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/fade.json", "--snapshots", snapshots],
            log: "\(folder.path)/play.log")
        defer { _ = player.stop() }
        // red, the fade to blue, blue, and the first steps of the fade back to red.
        guard
            eventually(
                "a fade to blue and back",
                {
                    presented().contains { $0["slide"] == "1-red" && $0["fade"] != nil }
                })
        else { return }
        let records = presented()
        let firstBlue = try #require(records.firstIndex { $0["slide"] == "2-blue" })
        let blueDone = try #require(records.firstIndex { $0["slide"] == "2-blue" && $0["fade"] == nil })
        let steps = records[firstBlue..<blueDone]
        #expect(steps.count >= 10, "\(steps.count) steps in 0.5 s at 60 Hz")
        let shares = steps.compactMap { $0["fade"].flatMap(Double.init) }
        #expect(shares.count == steps.count && zip(shares, shares.dropFirst()).allSatisfy { $0 < $1 })
        var reds: [Int] = []
        for record in steps {
            let sequence = try #require(record["seq"].flatMap(Double.init).map(Int.init))
            let share = try #require(record["fade"].flatMap(Double.init))
            let centre = try pixel(ofSnapshot: sequence, x: 80, y: 48)
            let corner = try pixel(ofSnapshot: sequence, x: 2, y: 2)
            // One mix over the whole picture: no part of the frame is a step behind.
            #expect(centre == corner, "step \(sequence)")
            let expectedRed = Double(JPEGFixture.red.red) * (1 - share) + Double(JPEGFixture.blue.red) * share
            #expect(abs(Double(centre.red) - expectedRed) <= 10, "step \(sequence) at \(share): \(centre)")
            reds.append(Int(centre.red))
        }
        #expect(reds.contains { $0 > 60 && $0 < 190 }, "an intermediate colour: \(reds)")
        // The last step is the new slide exactly, pixel for pixel as `vitrine render` draws it.
        let blueSequence = try #require(records[blueDone]["seq"].flatMap(Double.init).map(Int.init))
        let rendered = "\(folder.path)/blue.ppm"
        let console = RecordingConsole()
        #expect(
            VitrineCommand.run(
                arguments: ["render", "\(library)/Fade/2-blue.jpg", "--panel", "160x96", "--output", rendered],
                console: console) == 0)
        let name = String(blueSequence)
        let snapshot = "\(snapshots)/\(String(repeating: "0", count: 6 - name.count))\(name).ppm"
        #expect(try FileBytes.read(snapshot) == FileBytes.read(rendered))
        // The interval counts from the end of the fade.
        let blueShown = try #require(records[blueDone]["t"].flatMap(Double.init))
        let backToRed = try #require(records.first { $0["slide"] == "1-red" && $0["fade"] != nil }?["t"])
        #expect((Double(backToRed) ?? 0) - blueShown >= 0.35)

        #expect(ctl("category Pairs") == "ok")
        guard
            eventually(
                "the pair", { presented().contains { $0["slide"] == "p1 + p2" && $0["fade"] == nil } })
        else { return }
        let pair = try #require(presented().first { $0["slide"] == "p1 + p2" && $0["fade"] == nil })
        #expect(pair["file"] == "\(library)/Pairs/p1.jpg + \(library)/Pairs/p2.jpg")
        let sequence = try #require(pair["seq"].flatMap(Double.init).map(Int.init))
        // Each 58x96 photo centred in its 80x96 half: red at 11..<69, blue at 91..<149.
        #expect(Self.near(try pixel(ofSnapshot: sequence, x: 40, y: 48), JPEGFixture.red))
        #expect(Self.near(try pixel(ofSnapshot: sequence, x: 120, y: 48), JPEGFixture.blue))
        #expect(try pixel(ofSnapshot: sequence, x: 4, y: 48) == .black)
        #expect(try pixel(ofSnapshot: sequence, x: 80, y: 48) == .black)
        #expect(try pixel(ofSnapshot: sequence, x: 155, y: 48) == .black)
        #expect(player.stop() == 0)
    }

    /// The player on category Heal with an 8 MiB budget and the rendition cache in `cache`.
    func playHealing() throws -> Running {
        try folder.write(
            "heal.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 0.2,
                 "transition": "none", "memoryBudgetMiB": 8, "startCategory": "Heal", "renditionCacheFolder": "cache",
                 "display": {"backend": "headless", "headlessSize": "160x96"}, "controlSocket": "control.sock"}
                """)
        return try Running(
            arguments: ["play", "--config", "\(folder.path)/heal.json", "--snapshots", snapshots],
            log: "\(folder.path)/play.log")
    }

    /// A photo refused for the memory budget (a progressive file, whose every coefficient libjpeg must hold) heals
    /// itself: its rendition for this screen is made in the background into the rendition cache, the category is
    /// read again with it, and it plays, with its picture. The library is not written.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aPhotoRefusedForMemoryGetsARenditionAndPlays() throws {
        let size = Size(width: 2400, height: 1440)
        try folder.write(
            "library/Heal/big.jpg",
            try JPEGFixture.encode(
                rgb: JPEGFixture.solid(Self.magenta, size: size), size: size, subsampling: .s444, progressive: true))
        try photo("Heal/small.jpg", Self.cyan, Size(width: 160, height: 96))
        let original = try FileBytes.read("\(library)/Heal/big.jpg")
        let player = try playHealing()
        #expect(eventually("the refusal", { player.output.contains("big.jpg: a rendition for this screen") }))
        let rendition = "\(folder.path)/cache/Heal/big@160x96.jpg"
        // The rendition is made at idle priority: on a machine busy with other tests it waits for a free moment.
        #expect(eventually("the rendition", within: 180, { FileBytes.exists(rendition) }))
        guard eventually("the healed photo on screen", { presented().contains { $0["slide"] == "big" } }) else {
            _ = player.stop()
            Issue.record("\(player.output)")
            return
        }
        let record = try #require(presented().first { $0["slide"] == "big" })
        #expect(record["file"] == rendition)
        let sequence = try #require(record["seq"].flatMap(Double.init).map(Int.init))
        #expect(Self.near(try pixel(ofSnapshot: sequence, x: 80, y: 48), Self.magenta))
        #expect(try FileBytes.read("\(library)/Heal/big.jpg") == original)
        #expect(try Folder.entryNames(in: "\(library)/Heal").sorted() == ["big.jpg", "small.jpg"])
        // The maker's thread runs at idle priority: on a machine busy with other tests its outcome (and this line)
        // may come after the next index has found the rendition in the cache and the photo is on screen.
        #expect(
            eventually("the maker's line", within: 60) { player.output.contains("wrote \(rendition)") },
            "\(player.output)")
        #expect(player.stop() == 0)
    }

    /// The rendition cache on a disk at its floor (a real 8 MiB tmpfs, 5 MiB taken: its floor is half of it): the
    /// two photos refused for memory get no rendition, the player says why once (and then a line a photo, as it
    /// does for each refusal), and plays on.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aRenditionCacheAtItsDisksFloorIsSaidOnceAndTheShowGoesOn() throws {
        let size = Size(width: 2400, height: 1440)
        for name in ["big1", "big2"] {
            try folder.write(
                "library/Heal/\(name).jpg",
                try JPEGFixture.encode(
                    rgb: JPEGFixture.solid(Self.magenta, size: size), size: size, subsampling: .s444, progressive: true)
            )
        }
        try photo("Heal/small.jpg", Self.cyan, Size(width: 160, height: 96))
        let cache = "\(folder.path)/cache"
        try FileBytes.createDirectories(cache)
        guard let disk = TemporaryMount(tmpfsAt: cache, megabytes: 8, refused: { Issue.record("\($0)") }) else {
            return
        }
        defer { disk.unmount() }
        try folder.write("cache/taken", [UInt8](repeating: 1, count: 5 << 20))
        let player = try playHealing()
        let said = "renditions: the disk of \(cache) has 3.0 MiB free and keeps 4.0 MiB for the position, the stars"
        // The maker runs at idle priority: on a machine busy with other tests it waits for a free moment.
        #expect(eventually("the full disk said", within: 180, { player.output.contains(said) }), "\(player.output)")
        #expect(
            eventually("both photos tried", within: 180) {
                player.output.contains("big1.jpg: a rendition for this screen")
                    && player.output.contains("big2.jpg: a rendition for this screen")
            })
        #expect(
            eventually("the other photo's line", within: 180) {
                player.output.contains("big1.jpg: no rendition, as the rendition cache's disk is at its floor")
                    || player.output.contains("big2.jpg: no rendition, as the rendition cache's disk is at its floor")
            }, "\(player.output)")
        #expect(eventually("the show going on", { presented().contains { $0["slide"] == "small" } }))
        #expect(player.stop() == 0)
        #expect(player.output.ranges(of: "renditions: the disk of").count == 1, "\(player.output)")
        #expect(try Folder.entryNames(in: cache) == ["taken"])
        #expect(!presented().contains { $0["slide"]?.hasPrefix("big") == true })
    }
}
