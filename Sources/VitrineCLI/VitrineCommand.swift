import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The `vitrine` command line: dispatches to a subcommand and turns its outcome into an exit status
/// (0 success, 1 a failure such as a broken photo or config, 2 a usage error).
public enum VitrineCommand {
    public static let version = VitrineVersion.string

    static let subcommands: [(name: String, summary: String)] = [
        ("play", "play the slideshow"),
        ("ctl", "send a command to a running player"),
        ("render", "render a photo (or a library) to panel-sized image files"),
        ("probe", "show the device profile chosen for a panel"),
        ("bench", "time decode-to-frame for photos and report peak memory"),
        ("renditions", "write the renditions the device profiles pick, beside each photo"),
        ("check-config", "validate config and device-table files and explain them"),
        ("sync", "mirror the config's sources (WebDAV folders, SMB shares) into the library once"),
        ("doctor", "check the installation and say what is wrong, with the command that fixes it"),
    ]

    static var usage: String {
        var lines = [
            "usage: vitrine SUBCOMMAND [options]", "",
            "Vitrine: a slideshow player for photo frames and kiosks that drives the screen through DRM/KMS.", "",
            "subcommands:",
        ]
        for command in subcommands { lines.append("  \(command.name.padding(13))\(command.summary)") }
        lines += [
            "", "Run 'vitrine SUBCOMMAND --help' for a subcommand's options; 'vitrine --version' for the version.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    public static func run(arguments: [String], console: Console = StandardConsole()) -> Int32 {
        guard let first = arguments.first else {
            console.error(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        do throws(UsageError) {
            switch first {
            case "--help", "-h", "help":
                console.out(usage)
                return 0
            case "--version", "version":
                console.out("vitrine \(version)\n")
                return 0
            case "play":
                return try PlayCommand(console: console).run(rest)
            case "ctl":
                return try CtlCommand(console: console).run(rest)
            case "render":
                return try RenderCommand(console: console).run(rest)
            case "probe":
                return try ProbeCommand(console: console).run(rest)
            case "bench":
                return try BenchCommand(console: console).run(rest)
            case "renditions":
                return try RenditionsCommand(console: console).run(rest)
            case "check-config":
                return try CheckConfigCommand(console: console).run(rest)
            case "sync":
                return try SyncCommand(console: console).run(rest)
            case "doctor":
                return try DoctorCommand(console: console).run(rest)
            default:
                throw UsageError(command: "", message: "unknown subcommand '\(first)'")
            }
        } catch {
            console.error(error.line + "\n")
            return 2
        }
    }

    public static func exit(with status: Int32) -> Never {
        Glibc.exit(status)
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
