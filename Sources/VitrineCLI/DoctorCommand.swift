import VitrineCore
import VitrineDisplay
import VitrineInput
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine doctor`: looks at a real installation the way the service will run it and says what is wrong in words
/// a frame's owner understands, each with the command that fixes it. Exit status 0 when all is well, 1 when
/// something is wrong; `--json` for a fleet's tools.
struct DoctorCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "doctor",
        synopsis: "[--config FILE] [--user NAME] [--json] [--root DIR]",
        summary: """
            Checks the installation as the service runs it: the config, the service user and its groups against the
            devices present, the screen, the library (readable, and writable with the web remote), the state
            folder and whether it survives a reboot, free space and memory against the profile, the MQTT broker and
            the sources, CEC and GPIO lines, whether the service is enabled, and its last errors in the journal.
            Each finding is one line; a problem has the command that fixes it under it. Exits 0 when nothing is
            wrong, else 1. --root checks an installation mounted elsewhere (a frame's SD card): its files only, not
            this machine's screen, network or journal.
            """,
        options: [
            .init(name: "--config", value: "FILE", help: "the config (default: the service's, else the usual places)"),
            .init(name: "--user", value: "NAME", help: "the service user (default: the unit's User=, else vitrine)"),
            .init(name: "--json", value: nil, help: "one JSON object: healthy, and each finding"),
            .init(name: "--root", value: "DIR", help: "the installation's root (default /)"),
        ],
        maximumArguments: 0)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        let system = DoctorSystem(root: parsed.value("--root") ?? "/")
        var doctor = Doctor(system: system)
        doctor.examine(config: parsed.value("--config"), user: parsed.value("--user"))
        console.out(parsed.has("--json") ? doctor.report.json : doctor.report.text)
        return doctor.report.exitStatus
    }
}

/// The checks, in the order a frame's owner would look: what is installed, then what the player needs.
struct Doctor {
    let system: DoctorSystem
    var report = DoctorReport()

    init(system: DoctorSystem) {
        self.system = system
    }

    mutating func examine(config explicit: String?, user explicitUser: String?) {
        let unit = system.unit()
        let settings = checkConfig(explicit ?? unit?.config)
        let account = checkUser(explicitUser ?? unit?.user ?? "vitrine", unit: unit)
        if let account { checkGroups(account) }
        var budgetMiB = settings?.memoryBudgetMiB
        if system.isLive, let settings {
            budgetMiB = checkScreen(settings) ?? budgetMiB
        }
        if let settings { checkLibrary(settings, account: account) }
        checkState(unit: unit, account: account)
        checkMemory(budgetMiB: budgetMiB)
        if let settings {
            checkLinks(settings)
            checkDevices(settings)
        }
        if system.isLive { checkService(unit: unit) }
    }

    // MARK: - the installation

    private mutating func checkConfig(_ explicit: String?) -> Settings? {
        let candidates = explicit.map { [$0] } ?? ConfigContext.searchPath
        guard let path = candidates.first(where: { FileBytes.exists(system.at($0)) }) else {
            if let explicit {
                report.add(
                    "config", .problem, "\(explicit) is not there",
                    fix: "sudo cp /usr/share/vitrine/vitrine.json \(explicit), then edit it")
                return nil
            }
            report.add("config", .note, "no config file: the player plays with its built-in settings")
            return Settings()
        }
        do {
            var settings = try Settings.load(path: system.at(path))
            // Paths in the config are the frame's, below the root.
            if !system.root.isEmpty, settings.library.hasPrefix(system.root + "/") {
                settings.library = String(settings.library.dropFirst(system.root.count))
            }
            report.add("config", .ok, "\(path) is valid")
            return settings
        } catch {
            report.add(
                "config", .problem, "\(error)".replacingRoot(system.root),
                fix: "edit \(path) (the line and field are above); `vitrine check-config \(path)` explains it")
            return nil
        }
    }

    private mutating func checkUser(_ name: String, unit: DoctorSystem.Unit?) -> DoctorSystem.Account? {
        if unit == nil {
            report.add(
                "service", .problem, "no vitrine.service is installed: nothing starts the player at boot",
                fix: "sudo apt install vitrine (or deploy/install.sh from a checkout)")
        }
        guard let account = system.account(name) else {
            report.add(
                "user", .problem, "the service user \(name) does not exist, so the service cannot start",
                fix: "sudo adduser --system --group --no-create-home \(name)")
            return nil
        }
        let groups = account.groups.map(\.name).sorted().joined(separator: ", ")
        report.add("user", .ok, "the service runs as \(name) (groups: \(groups))")
        return account
    }

    /// Each kind of device present, against the groups the user is in (the unit may add them with
    /// SupplementaryGroups=, but a user who is in them works under any unit).
    private mutating func checkGroups(_ account: DoctorSystem.Account) {
        let kinds: [(what: String, folder: String, prefix: String)] = [
            ("the screen", "/dev/dri", "card"), ("video decoding", "/dev/dri", "renderD"),
            ("keys and touch", "/dev/input", "event"), ("buttons and a motion sensor", "/dev", "gpiochip"),
            ("the TV (HDMI-CEC)", "/dev", "cec"),
        ]
        var missing: [String: [String]] = [:]
        for kind in kinds {
            for device in system.devices(in: kind.folder, prefix: kind.prefix) {
                guard let (gid, open) = system.deviceGroup(device), !open, !account.inGroup(gid), gid != 0 else {
                    continue
                }
                let group = system.groupName(gid)
                if !(missing[group]?.contains(kind.what) ?? false) { missing[group, default: []].append(kind.what) }
            }
        }
        guard !missing.isEmpty else {
            report.add("groups", .ok, "\(account.name) may use every screen, input, GPIO and CEC device here")
            return
        }
        for (group, uses) in missing.sorted(by: { $0.key < $1.key }) {
            report.add(
                "groups", .problem,
                "\(account.name) is not in the \(group) group, so it cannot use \(uses.joined(separator: " or "))",
                fix: "sudo usermod -aG \(group) \(account.name) && sudo systemctl restart vitrine")
        }
    }

    // MARK: - what the player needs

    /// The screen the config asks for; returns the budget of the profile it gets (for the memory check).
    private mutating func checkScreen(_ settings: Settings) -> Int? {
        switch settings.display.backend {
        case .headless:
            report.add("screen", .note, "the config plays headless (display.backend): no screen is used")
            return nil
        case .fbdev:
            let path = settings.display.device ?? "/dev/fb0"
            report.add(
                "screen", FileBytes.exists(path) ? .ok : .problem,
                "fbdev \(path) \(FileBytes.exists(path) ? "is there" : "is not there")",
                fix: FileBytes.exists(path) ? nil : "check display.device in the config")
            return nil
        case .auto, .drm:
            break
        }
        let paths = settings.display.device.map { [$0] } ?? DRMDevice.cardPaths()
        var seen: [String] = []
        var wanted = settings.outputs.map(\.connector)
        if let connector = settings.display.connector { wanted.append(connector) }
        let table = (try? ConfigContext(settings: settings, path: nil).deviceTable(explicit: nil)) ?? .fallbackOnly
        var budget: Int?
        var found: [String] = []
        for path in paths {
            guard let device = try? DRMDevice(path: path) else {
                seen.append("\(path) cannot be opened")
                continue
            }
            defer { device.close() }
            guard device.hasModesetting else {
                seen.append("\(path) (\(device.driver)) drives no screen")
                continue
            }
            for connector in device.connectors() where !connector.isWriteback {
                let named =
                    wanted.isEmpty || wanted.contains(connector.name)
                    || connector.edid?.monitorName.map(wanted.contains) == true
                guard connector.connected, let mode = connector.preferredMode else {
                    seen.append("\(connector.name) not connected")
                    continue
                }
                guard named else { continue }
                let profile = table.profile(for: connector.panel(mode: mode))
                budget = max(budget ?? 0, profile.memoryBudgetMiB)
                let edid = connector.edid?.monitorName.map { " (\($0))" } ?? ""
                found.append("\(connector.name)\(edid) at \(mode) on \(path) \(device.driver), profile \(profile.id)")
            }
        }
        if found.isEmpty {
            let what = wanted.isEmpty ? "no screen is connected" : "\(wanted.joined(separator: ", ")) is not connected"
            report.add(
                "screen", .problem,
                "\(what) (\(seen.isEmpty ? "no DRM card in /dev/dri" : seen.joined(separator: "; ")))",
                fix: paths.isEmpty
                    ? "load the display driver: on a Raspberry Pi, dtoverlay=vc4-kms-v3d in /boot/firmware/config.txt, then reboot"
                    : "plug the screen in and switch it on; `vitrine probe` lists the connectors")
        } else {
            report.add("screen", .ok, found.joined(separator: "; "))
        }
        return budget
    }

    private mutating func checkLibrary(_ settings: Settings, account: DoctorSystem.Account?) {
        let library = settings.library
        guard FileBytes.exists(system.at(library)) else {
            report.add(
                "library", .problem, "the photo folder \(library) is not there",
                fix:
                    "sudo mkdir -p \(library) && sudo chown \(account?.name ?? "vitrine"): \(library), then copy photos in"
            )
            return
        }
        let folders = ((try? Folder.folderNames(in: system.at(library))) ?? []).filter { !$0.hasPrefix(".") }
        if let account, let (path, why) = system.denies(.read, library, to: account) {
            report.add(
                "library", .problem, "\(account.name) cannot read the photos in \(library): \(why) (\(path))",
                fix: "sudo chmod -R a+rX \(library)")
        } else {
            report.add("library", .ok, "\(library) with \(folders.count) categor\(folders.count == 1 ? "y" : "ies")")
        }
        if settings.web != nil, let account, let (path, why) = system.denies(.write, library, to: account) {
            report.add(
                "library", .problem,
                "the web remote's uploads need \(library) writable by \(account.name): \(why) (\(path))",
                fix: "sudo chgrp -R \(account.name) \(library) && sudo chmod -R g+w \(library)")
        }
        if let free = system.freeBytes(at: library) {
            let floor = (settings.web?.freeSpaceFloorMiB ?? 64) << 20
            if free < floor {
                report.add(
                    "disk", .problem,
                    "only \(MemoryBudget.format(free)) free where the photos are: uploads and new renditions stop",
                    fix: "delete old photos or move the library to a larger disk")
            }
        }
    }

    private mutating func checkState(unit: DoctorSystem.Unit?, account: DoctorSystem.Account?) {
        guard let unit else { return }
        guard let folder = unit.stateDirectory else {
            report.add("state", .note, "no StateDirectory= in the unit: the position and stars are not kept")
            return
        }
        guard FileBytes.exists(system.at(folder)) else {
            // systemd makes it when the service starts.
            report.add("state", .note, "\(folder) is made when the service first starts")
            return
        }
        if let account, let (path, why) = system.denies(.write, folder, to: account) {
            report.add(
                "state", .problem, "\(account.name) cannot write its state in \(folder): \(why) (\(path))",
                fix: "sudo chown -R \(account.name): \(folder)")
            return
        }
        if let how = system.impermanence(of: folder) {
            report.add(
                "state", .note,
                "\(folder) is \(how): the slide to resume from and the stars are lost at each restart of the board",
                fix: "for a read-only root, mount a small writable partition at \(folder) (see the deploy guide)")
            checkStateDisk(folder)
            return
        }
        report.add("state", .ok, "\(folder) is kept across reboots")
        checkStateDisk(folder)
    }

    /// The renditions are cached in the state folder unless the config puts them elsewhere; the player stops making
    /// them at the disk's floor, but a disk at its floor leaves little for the position and the token (and a state
    /// folder in memory takes the board's memory).
    private mutating func checkStateDisk(_ folder: String) {
        guard let space = system.diskSpace(at: folder) else { return }
        let floor = DiskFloor.bytes(total: space.total)
        guard space.free < floor else { return }
        let renditions = system.bytesUsed(under: "\(folder)/renditions")
        let taken = renditions > 0 ? " (renditions take \(MemoryBudget.format(renditions)) of it)" : ""
        report.add(
            "disk", .problem,
            "only \(MemoryBudget.format(space.free)) of \(MemoryBudget.format(space.total)) is free where the state is "
                + "kept\(taken): the player makes no more renditions there, and saving the position may fail",
            fix: renditions > 0
                ? "sudo rm -r \(folder)/renditions (they are made again as needed), or give \(folder) a larger partition"
                : "free space on the disk of \(folder), or give it a larger partition")
    }

    private mutating func checkMemory(budgetMiB: Int?) {
        guard system.isLive else { return }
        let total = ProcessMemory.totalBytes() >> 20
        guard total > 0 else { return }
        guard let budget = budgetMiB else {
            report.add("memory", .ok, "\(total) MiB in this board")
            return
        }
        // The player takes its budget and about 30 MiB more; the system needs its own share.
        if budget + 30 + 96 > total {
            report.add(
                "memory", .problem,
                "the memory budget of \(budget) MiB leaves too little of this board's \(total) MiB for the system",
                fix: "set memoryBudgetMiB to at most \(max(32, total - 126)) in the config")
        } else {
            report.add("memory", .ok, "budget \(budget) MiB of the board's \(total) MiB")
        }
    }

    private mutating func checkLinks(_ settings: Settings) {
        guard system.isLive else { return }
        if let mqtt = settings.mqtt {
            if let why = DoctorNetwork.reach(host: mqtt.host, port: mqtt.port) {
                report.add(
                    "mqtt", .problem, "the MQTT broker \(mqtt.host):\(mqtt.port) does not answer: \(why)",
                    fix: "start the broker (on its machine: sudo systemctl start mosquitto), or correct mqtt.host and "
                        + "mqtt.port in the config")
            } else {
                report.add("mqtt", .ok, "the broker \(mqtt.host):\(mqtt.port) answers")
            }
        }
        for source in settings.sources {
            let location = source.location
            if let why = DoctorNetwork.reach(host: location.host, port: location.effectivePort) {
                report.add(
                    "sources", .problem, "\(source.name): \(location.origin) does not answer: \(why)",
                    fix: "check that the server is on and reachable from the frame, and the url in the config")
            } else {
                report.add("sources", .ok, "\(source.name): \(location.origin) answers")
            }
        }
    }

    private mutating func checkDevices(_ settings: Settings) {
        if settings.cec != nil {
            let adapters = system.devices(in: "/dev", prefix: "cec")
            if let adapter = settings.cec?.adapter, !FileBytes.exists(system.at(adapter)) {
                report.add(
                    "cec", .problem,
                    "the CEC adapter \(adapter) is not there (have: \(adapters.joined(separator: ", ")))",
                    fix: "correct cec.adapter in the config, or leave it out to use the screen's own")
            } else if adapters.isEmpty {
                report.add(
                    "cec", .problem, "no HDMI-CEC adapter (/dev/cec*): the TV will not follow the screen",
                    fix: "on a Raspberry Pi: dtoverlay=vc4-kms-v3d in /boot/firmware/config.txt; elsewhere a USB CEC "
                        + "adapter")
            } else {
                report.add("cec", .ok, "adapters: \(adapters.joined(separator: ", "))")
            }
        }
        guard system.isLive else { return }
        let lines = settings.buttons.map(\.line) + (settings.presence?.sensor.map { [$0] } ?? [])
        for line in lines {
            switch GPIOLineInput.locate(line) {
            case .success(let place): report.add("gpio", .ok, "\(line) is \(place)")
            case .failure(let error):
                report.add(
                    "gpio", .problem, "\(error)",
                    fix: "`gpioinfo` lists the lines; correct the line's name or chip in the config")
            }
        }
    }

    private mutating func checkService(unit: DoctorSystem.Unit?) {
        guard unit != nil else { return }
        if let enabled = DoctorNetwork.output(of: "systemctl", ["is-enabled", "vitrine.service"]) {
            let active = DoctorNetwork.output(of: "systemctl", ["is-active", "vitrine.service"]) ?? "unknown"
            if enabled != "enabled" {
                report.add(
                    "service", .problem, "vitrine.service is \(enabled): the frame will not play after a reboot",
                    fix: "sudo systemctl enable --now vitrine")
            } else if active != "active" && active != "activating" {
                report.add(
                    "service", .problem, "vitrine.service is enabled but \(active)",
                    fix: "sudo systemctl restart vitrine; journalctl -u vitrine -b says why it stopped")
            } else {
                report.add("service", .ok, "vitrine.service is enabled and \(active)")
            }
        }
        if let errors = DoctorNetwork.journalErrors(count: 5), !errors.isEmpty {
            report.add(
                "journal", .note,
                "the player's last errors since boot: " + errors.suffix(3).joined(separator: " | "),
                fix: "journalctl -u vitrine -b for the whole story")
        }
    }
}

extension String {
    /// A message about a file below the root, with the root taken out of its paths.
    fileprivate func replacingRoot(_ root: String) -> String {
        guard !root.isEmpty else { return self }
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: root) {
            out += rest[..<range.lowerBound]
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
