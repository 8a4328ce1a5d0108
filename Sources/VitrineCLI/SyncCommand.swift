import CLinux
import VitrineCore
import VitrinePlatform
import VitrineSync

/// `vitrine sync --once`: mirrors the config's sources into the library and exits, for cron or a first fill.
///
/// Syncs run in a process of their own, at idle priority for the CPU and the disk: libcurl and what it loads (TLS,
/// its resolver's threads, a transfer's buffers) are never mapped into the player, and a server that hangs or a
/// library that crashes takes only this process with it.
struct SyncCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "sync",
        synopsis: "--once [--source NAME] [--config FILE] [--library DIR] [--rendition WxH] [--report]",
        summary: """
            Mirrors each source of the config (a WebDAV folder, an SMB share) into its category of the library, then exits: new
            and changed photos are fetched (under a hidden name, renamed into place whole), photos removed or
            renamed on the server leave the cache, photos of the user's own in the same folders are left alone.
            A fetch cut off resumes where it stopped at the next sync. Exits 1 when a source could not be synced.
            """,
        options: [
            .init(name: "--once", help: "sync each source once and exit"),
            .init(name: "--source", value: "NAME", help: "only this source (default: every source)"),
            .init(name: "--library", value: "DIR", help: "the library (default: the config's library)"),
            .init(
                name: "--rendition", value: "WxH",
                help: "the panel's rendition canvas (`vitrine probe` says it): sources that keep renditions keep "
                    + "each photo at the size it is shown there (the player passes its own)"),
            .init(
                name: "--fit", value: "MODE",
                help: "contain|cover|contain-blur for those renditions (default: the config's, else contain)"),
            .init(name: "--config", value: "FILE", help: "config file (default: see README)"),
            .init(
                name: "--report",
                help: "JSON lines on standard output instead of text: progress, then how each sync ended (the "
                    + "player reads these from the syncs it starts)"),
        ],
        maximumArguments: 0)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        guard parsed.has("--once") else {
            throw UsageError(
                command: "sync", message: "say --once (a playing player syncs its sources by itself)")
        }
        let context: ConfigContext
        do {
            context = try ConfigContext.load(explicit: parsed.value("--config"))
        } catch {
            console.error("vitrine sync: \(error)\n")
            return 1
        }
        var sources = context.settings.sources
        if let name = parsed.value("--source") {
            sources = sources.filter { $0.name == name }
            guard !sources.isEmpty else {
                let known = context.settings.sources.map(\.name).joined(separator: ", ")
                throw UsageError(
                    command: "sync",
                    message: "--source: no source \"\(name)\" (known: \(known.isEmpty ? "none" : known))")
            }
        }
        guard !sources.isEmpty else {
            console.error("vitrine sync: \(context.path ?? "the config") has no sources\n")
            return 1
        }
        if parsed.has("--report") {
            // Started by the player: whatever descriptor of its own slipped through without close-on-exec (an
            // accepted socket, a library's) is not held here.
            vitrine_close_from(3)
        }
        // Refused in a container without SCHED_IDLE: the sync then runs at normal priority.
        _ = vitrine_make_thread_idle()
        let library = parsed.value("--library") ?? context.settings.library
        let canvas = try OptionValues.size(parsed, "--rendition", command: "sync")
        let fit =
            try OptionValues.choice(parsed, "--fit", as: Fit.self, command: "sync") ?? context.settings.fit ?? .contain
        let smallBoard = ProcessMemory.totalBytes() <= 1 << 30
        var failed = false
        let machineReadable = parsed.has("--report")
        for source in sources {
            let started = MonotonicClock.seconds()
            let keep = source.keep ?? (smallBoard ? .rendition : .original)
            if keep == .rendition, canvas == nil, source.keep == .rendition, !machineReadable {
                console.out(
                    "\(source.name): keeps renditions, but no --rendition WxH says the panel's: photos are kept as "
                        + "they are\n")
            }
            let engine = SyncEngine(
                source: source, libraryRoot: library,
                rendition: keep == .rendition ? canvas.map { ($0, fit) } : nil,
                maxMegapixels: context.settings.maxMegapixels)
            var lastProgress = -1.0
            do {
                var listed = false
                let summary = try engine.run { progress in
                    if machineReadable {
                        // At most four a second: a sync of small photos must not flood the player with lines.
                        let now = MonotonicClock.seconds()
                        guard now - lastProgress >= 0.25 || progress.isFirstFetch else { return }
                        lastProgress = now
                        console.out(Self.report(progress).line + "\n")
                    } else if case .fetching(0, let total) = progress.phase, !listed {
                        listed = true
                        console.out("\(source.name): listed \(source.location); fetching \(total)\n")
                    }
                }
                if machineReadable {
                    console.out(SyncReport.done(Self.tally(summary)).line + "\n")
                } else {
                    report(summary, source: source, seconds: MonotonicClock.seconds() - started)
                }
            } catch {
                failed = true
                if machineReadable {
                    console.out(SyncReport.failed(Self.failure(error)).line + "\n")
                } else {
                    console.error("\(source.name): \(Self.describe(error))\n")
                }
            }
        }
        return failed ? 1 : 0
    }

    static func report(_ progress: SyncEngine.Progress) -> SyncReport {
        switch progress.phase {
        case .listing(let folders): return .listing(folders: folders)
        case .fetching(let done, let total): return .fetching(done: done, total: total, bytes: progress.bytes)
        }
    }

    static func tally(_ summary: SyncEngine.Summary) -> SyncTally {
        var tally = summary.tally
        tally.conflicts = summary.conflicts.count
        tally.skipped = summary.skipped.count
        return tally
    }

    static func failure(_ error: SyncError) -> SyncFailure {
        switch error.kind {
        case .offline: return SyncFailure(kind: .offline, message: error.description)
        case .busy(let retryAfter): return SyncFailure(kind: .busy, message: error.description, retryAfter: retryAfter)
        case .refused: return SyncFailure(kind: .refused, message: error.description)
        case .badAnswer: return SyncFailure(kind: .badAnswer, message: error.description)
        case .local: return SyncFailure(kind: .local, message: error.description)
        case .settings: return SyncFailure(kind: .settings, message: error.description)
        }
    }

    private func report(_ summary: SyncEngine.Summary, source: SourceSettings, seconds: Double) {
        let megabytes = Double(summary.tally.bytes) / 1_000_000
        var line =
            "\(source.name): in sync: \(summary.tally.listed) photos on the server; \(summary.tally.fetched) fetched"
        line += " (\(ConfigObject.format((megabytes * 10).rounded() / 10)) MB), \(summary.tally.moved) moved,"
        line += " \(summary.tally.deleted) deleted, \(summary.tally.kept) unchanged"
        line += " in \(ConfigObject.format((seconds * 10).rounded() / 10)) s\n"
        console.out(line)
        if summary.tally.notFitting > 0 {
            console.out(
                "\(source.name): \(summary.tally.notFitting) older photos do not fit in the cache's limit "
                    + "(cacheLimitMiB \(source.cacheLimitMiB ?? 0))\n")
        }
        for conflict in summary.conflicts {
            console.out("\(source.name): \(conflict.local): left alone, it is not the source's (a file of yours?)\n")
        }
        for skipped in summary.skipped { console.out("\(source.name): skipped \(skipped)\n") }
        for note in summary.notes { console.out("\(source.name): \(note)\n") }
    }

    static func describe(_ error: SyncError) -> String {
        switch error.kind {
        case .offline: return "offline: \(error)"
        case .busy(let retryAfter):
            return "server busy: \(error)" + (retryAfter.map { "; it asks to try again in \($0) s" } ?? "")
        case .refused: return "login refused: \(error)"
        case .badAnswer: return "bad answer: \(error)"
        case .local, .settings: return "\(error)"
        }
    }
}
