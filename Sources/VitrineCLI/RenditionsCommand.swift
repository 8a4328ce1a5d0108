import VitrineCore
import VitrineImage
import VitrinePlatform
import VitrineRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine renditions`: writes the `NAME@WxH.jpg` files the device profiles pick, beside each original.
struct RenditionsCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "renditions",
        synopsis: "[--library DIR] [--profiles ID,...] [--jobs N] [--quality Q]",
        summary: """
            For every photo of the library, writes the renditions the device profiles need (NAME@WxH.jpg beside
            NAME.jpg, .png, .webp, .heic or .avif: turned upright, scaled to the box the photo fills on the profile's
            canvas, baseline JPEG) when they are missing or older than the original; for every clip a Raspberry Pi's
            decoder would not play as it is (HEVC, 10 bits, over 30 pictures a second, larger than the largest
            screen), one H.264 copy NAME@WxH.mp4 of at most 1080p30, its sound copied. Originals are never modified.
            Each file is written under a hidden temporary name and renamed, so a run that is stopped leaves no
            partial file under a real name, and a running player picks the new files up as they appear. Exits 1
            when a photo failed.
            """,
        options: [
            .init(name: "--library", value: "DIR", help: "the library (default: the config's library)"),
            .init(
                name: "--profiles", value: "ID,...",
                help: "device profiles to make renditions for (default: every profile of the table)"),
            .init(name: "--jobs", value: "N", help: "photos encoded at once (default: the number of CPUs)"),
            .init(name: "--quality", value: "Q", help: "JPEG quality 1...100 (default 90)"),
            .init(
                name: "--fit", value: "MODE",
                help: "contain|cover|contain-blur (default: the config's, else each profile's)"),
            .init(name: "--devices", value: "FILE", help: "device table (default: the config's deviceTable)"),
            .init(name: "--config", value: "FILE", help: "config file (default: see README)"),
        ],
        maximumArguments: 0)

    /// The renditions to write for one original, largest first; the first failure skips the rest.
    struct Job: Sendable {
        var original: String
        var header: ImageHeader
        var targets: [(size: Size, destination: String)]
        /// A clip: its one rendition is H.264 in MP4 (`ClipRenditionWriter`), not a JPEG.
        var clip = false
    }

    /// What the workers share with the thread that reports.
    struct Progress {
        var next = 0
        var written = 0
        var failed = 0
        var finishedJobs = 0
        var finishedFiles = 0
        var lines: [String] = []
    }

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        let command = "renditions"
        let context: ConfigContext
        let table: DeviceTable
        do {
            context = try ConfigContext.load(explicit: parsed.value("--config"))
            table = try context.deviceTable(explicit: parsed.value("--devices"))
        } catch {
            console.error("vitrine renditions: \(error)\n")
            return 1
        }
        var profiles = table.profiles
        if let list = parsed.value("--profiles") {
            profiles = []
            for id in list.split(separator: ",").map({ String($0) }) {
                guard let profile = table.profiles.first(where: { $0.id == id }) else {
                    let known = table.profiles.map(\.id).joined(separator: ", ")
                    throw UsageError(command: command, message: "--profiles: no profile \"\(id)\" (known: \(known))")
                }
                profiles.append(profile)
            }
        }
        let jobs =
            try OptionValues.number(parsed, "--jobs", in: 1...64, command: command).map { Int($0) }
            ?? max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let quality = try OptionValues.number(parsed, "--quality", in: 1...100, command: command).map { Int($0) } ?? 90
        let fit = try OptionValues.choice(parsed, "--fit", as: Fit.self, command: command) ?? context.settings.fit
        let library = Library(root: parsed.value("--library") ?? context.settings.library)

        var failed = 0
        var upToDate = 0
        var originals = 0
        let writer = RenditionWriter(budget: MemoryBudget(limit: 1 << 30))
        var work: [Job] = []
        let categories: [LibraryCategory]
        do {
            categories = try library.categories()
        } catch {
            console.error("vitrine renditions: \(error)\n")
            return 1
        }
        for category in categories {
            let slides: [Slide]
            do {
                slides = try library.slides(in: category)
            } catch {
                console.error("failed \(error)\n")
                failed += 1
                continue
            }
            for slide in slides {
                guard let original = slide.original else { continue }
                originals += 1
                let header: ImageHeader
                do {
                    header = try writer.header(of: original)
                } catch {
                    console.error("failed \(error)\n")
                    failed += 1
                    continue
                }
                guard Double(header.size.pixelCount) <= context.settings.maxMegapixels * 1_000_000 else {
                    let error = ImageError(
                        file: original,
                        reason: .tooManyPixels(header.size, limitMegapixels: context.settings.maxMegapixels))
                    console.error("failed \(error)\n")
                    failed += 1
                    continue
                }
                let changed = Self.changeTime(original) ?? .infinity
                let folder = PathText.directory(of: original)
                let name = original.split(separator: "/").last.map(String.init) ?? original
                var job = Job(original: original, header: header, targets: [], clip: header.clip != nil)
                var sizes = RenditionPlan.targets(upright: header.displayedSize, profiles: profiles, fit: fit).map(
                    \.size)
                if let clip = header.clip {
                    sizes =
                        RenditionPlan.clipTarget(
                            upright: header.displayedSize, codec: clip.codec, frameRate: clip.frameRate,
                            bitDepth: clip.bitDepth, profiles: profiles, fit: fit
                        ).map { [$0] } ?? []
                }
                for size in sizes {
                    let destination = "\(folder)/\(RenditionPlan.fileName(original: name, size: size))"
                    if let written = Self.modificationTime(destination), written >= changed {
                        upToDate += 1
                    } else {
                        job.targets.append((size, destination))
                    }
                }
                if !job.targets.isEmpty { work.append(job) }
            }
        }

        let progress = Locked(Progress())
        let files = work.reduce(0) { $0 + $1.targets.count }
        let settings = context.settings
        // Each decode is charged to one budget shared by the workers: half of what the system has available.
        let budget = MemoryBudget(limit: max(256 << 20, ProcessMemory.availableBytes() / 2))
        let planned = work
        let threads = (0..<min(jobs, max(1, planned.count))).map { _ in
            JoinableThread {
                let writer = RenditionWriter(budget: budget)
                while true {
                    let index = progress.withLock { state -> Int in
                        defer { state.next += 1 }
                        return state.next
                    }
                    guard index < planned.count else { return }
                    let job = planned[index]
                    for target in job.targets {
                        let started = MonotonicClock.seconds()
                        let line: String
                        do {
                            var what = ""
                            if job.clip {
                                let done = try ClipRenditionWriter.write(
                                    original: job.original, size: target.size, to: target.destination)
                                let passed =
                                    done.passedOver > 0 ? ", \(done.passedOver) passed over for 30 a second" : ""
                                what =
                                    ": H.264 by \(done.encoder), \(done.pictures) pictures\(passed), "
                                    + (done.sound ? "sound copied" : "no sound")
                            } else {
                                try writer.write(
                                    original: job.original, header: job.header, size: target.size,
                                    to: target.destination, quality: quality, maxMegapixels: settings.maxMegapixels)
                            }
                            let milliseconds = Int((MonotonicClock.seconds() - started) * 1000)
                            line = "wrote \(target.destination) (\(milliseconds) ms)\(what)"
                        } catch {
                            // The error names the original when it is at fault (its other sizes would fail too), else
                            // the rendition that could not be written.
                            line = "failed \(error)"
                        }
                        let failed = line.hasPrefix("failed")
                        progress.withLock { state in
                            if failed { state.failed += 1 } else { state.written += 1 }
                            state.finishedFiles += 1
                            state.lines.append(line)
                        }
                        if failed { break }
                    }
                    progress.withLock { $0.finishedJobs += 1 }
                }
            }
        }
        let terminal = console is StandardConsole && isatty(STDOUT_FILENO) == 1
        while true {
            let (lines, done, finished) = progress.withLock { state in
                defer { state.lines = [] }
                return (state.lines, state.finishedFiles, state.finishedJobs >= work.count)
            }
            for line in lines {
                if line.hasPrefix("failed") {
                    if terminal { console.out("\r\u{1B}[K") }
                    console.error(line + "\n")
                } else if !terminal {
                    console.out(line + "\n")
                }
            }
            if terminal && !work.isEmpty { console.out("\r\u{1B}[K" + Self.bar(done: done, of: files)) }
            if finished { break }
            usleep(100_000)
        }
        for thread in threads { thread.join() }
        if terminal && !work.isEmpty { console.out("\n") }
        let result = progress.withLock { $0 }
        failed += result.failed
        let sizes = Set(profiles.map { "\($0.rendition)" }).sorted().joined(separator: ", ")
        console.out(
            "renditions: \(result.written) written, \(upToDate) up to date, \(failed) failed "
                + "(\(originals) originals in \(library.root); \(profiles.count) profiles, canvases \(sizes))\n")
        return failed == 0 ? 0 : 1
    }

    static func bar(done: Int, of total: Int) -> String {
        let width = 30
        let filled = total == 0 ? width : done * width / total
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            + "] \(done)/\(total)"
    }

    static func modificationTime(_ path: String) -> Double? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
    }

    /// When the original last changed: its contents (mtime) or its name (ctime, which a rename sets), so a photo
    /// replaced by one with an older mtime (`rsync -t`, `cp -p`) still gets new renditions.
    static func changeTime(_ path: String) -> Double? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        let changed = Double(status.st_ctim.tv_sec) + Double(status.st_ctim.tv_nsec) / 1e9
        return max(modified, changed)
    }
}
