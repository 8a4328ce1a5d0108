import VitrineCore
import VitrinePlatform
import VitrineRuntime

/// `vitrine play`: the slideshow.
struct PlayCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "play",
        synopsis:
            "[--config FILE] [--library DIR] [--display auto|drm[:PATH]|fbdev[:PATH]|headless[:WxH]] [--interval SECONDS] "
            + "[--category NAME] [--order name|shuffle|newest] [--control PATH] [--snapshots DIR] [--exit-after N] "
            + "[--stats]",
        summary: """
            Shows the library slide after slide until stopped (SIGTERM or SIGINT exit 0; SIGHUP reloads the config;
            SIGUSR1 toggles pause). `auto` drives the screen through DRM/KMS when a card can be opened as master,
            else a headless display that behaves like DRM (two buffers, one flip at a time, 60 Hz); --snapshots
            writes each headless frame as DIR/NNNNNN.ppm and a line to DIR/presented.jsonl.
            """,
        options: [
            .init(name: "--config", value: "FILE", help: "config file (default: see README)"),
            .init(name: "--library", value: "DIR", help: "photo library (default: the config's library)"),
            .init(name: "--display", value: "SPEC", help: "auto, drm[:PATH], fbdev[:PATH] or headless[:WxH]"),
            .init(name: "--interval", value: "SECONDS", help: "seconds per slide (default: the config's interval)"),
            .init(name: "--category", value: "NAME", help: "category to start with"),
            .init(name: "--order", value: "name|shuffle|newest", help: "slide order"),
            .init(name: "--control", value: "PATH", help: "control socket (default: $XDG_RUNTIME_DIR/vitrine.sock)"),
            .init(name: "--snapshots", value: "DIR", help: "write every presented frame and presented.jsonl here"),
            .init(name: "--exit-after", value: "N", help: "exit 0 after N slides have been presented"),
            .init(name: "--stats", value: nil, help: "log one line of figures per slide"),
        ],
        maximumArguments: 0)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        let command = "play"
        let context: ConfigContext
        let table: DeviceTable
        do {
            context = try ConfigContext.load(explicit: parsed.value("--config"))
            table = try context.deviceTable(explicit: nil)
        } catch {
            console.error(Self.errorLine("\(error)"))
            return 1
        }
        var settings = context.settings
        if let library = parsed.value("--library") { settings.library = library }
        settings.interval =
            try OptionValues.number(parsed, "--interval", in: 0.05...86400, command: command) ?? settings.interval
        settings.order =
            try OptionValues.choice(parsed, "--order", as: PlaybackOrder.self, command: command)
            ?? settings.order
        if let category = parsed.value("--category") { settings.startCategory = category }
        let display: DisplayChoice
        switch parsed.value("--display") ?? settings.display.backend.rawValue {
        case "auto":
            display = .auto
        case "headless":
            display = .headless(settings.display.headlessSize)
        case "drm":
            display = .drm(nil)
        case let spec where spec.hasPrefix("drm:"):
            display = .drm(String(spec.dropFirst("drm:".count)))
        case let spec where spec.hasPrefix("headless:"):
            guard let size = Size(parsing: spec.dropFirst("headless:".count)) else {
                throw UsageError(command: command, message: "--display \(spec): expected headless:WIDTHxHEIGHT")
            }
            display = .headless(size)
        case "fbdev":
            display = .fbdev(nil)
        case let spec where spec.hasPrefix("fbdev:"):
            display = .fbdev(String(spec.dropFirst("fbdev:".count)))
        case let spec:
            throw UsageError(
                command: command, message: "--display \(spec): expected auto, drm[:PATH] or headless[:WxH]")
        }
        let exitAfter = try OptionValues.number(parsed, "--exit-after", in: 1...1e9, command: command).map { Int($0) }
        var configuration = PlayConfiguration(
            settings: settings, configPath: context.path, deviceTable: table, display: display,
            snapshots: parsed.value("--snapshots"), exitAfter: exitAfter, stats: parsed.has("--stats"),
            controlPath: parsed.value("--control") ?? settings.controlSocket)
        configuration.ignoresSavedPosition = parsed.value("--category") != nil
        let console = self.console
        do {
            let runtime = try PlayerRuntime(configuration: configuration, log: EventLog { console.error($0) })
            return runtime.run()
        } catch {
            if error.stopped {
                console.error(EventLog.standardErrorIsJournal() ? "<5>\(error)\n" : "vitrine: \(error)\n")
                return 0
            }
            console.error(Self.errorLine("\(error)"))
            return 1
        }
    }

    /// A refusal to start; under systemd it carries the error priority so the journal shows it in red.
    static func errorLine(_ message: String) -> String {
        EventLog.standardErrorIsJournal() ? "<3>vitrine play: \(message)\n" : "vitrine play: \(message)\n"
    }
}
