import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine render`: photos to panel-sized frames on disk, the way the player would show them.
struct RenderCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "render",
        synopsis: "IMAGE --output FILE | PHOTO-OR-LIBRARY... --output-dir DIR [options]",
        summary: """
            Renders each photo as the panel would show it: EXIF orientation applied, scaled to fit, centred on the
            background (contain) or on a blurred copy of itself (contain-blur) or cropped to fill (cover), optionally
            turned for a rotated panel, with its caption. --pair-with shows two portrait photos side by side and
            --fade-from renders one step of the crossfade from another photo; --overlay paints the clock, date and texts
            as the player does, at --time. A folder is read as a library
            (categories, renditions, portrait pairs with --pair-portraits). PPM (.ppm) or PNG (.png) output. --json
            prints what was written as JSON: each frame's files, captions and places.
            """,
        options: [
            .init(name: "--panel", value: "WxH", help: "the panel's scanout size (default: display.headlessSize)"),
            .init(
                name: "--fit", value: "contain|cover|contain-blur",
                help: "placement (default: config fit, else contain)"),
            .init(name: "--rotate", value: "0|90|180|270", help: "clockwise turn of the picture on the panel"),
            .init(name: "--background", value: "RRGGBB", help: "letterbox colour (default: config, else 000000)"),
            .init(name: "--output", value: "FILE", help: "output file for a single photo (.ppm or .png)"),
            .init(name: "--output-dir", value: "DIR", help: "folder for one PNG per photo"),
            .init(name: "--budget", value: "MiB", help: "memory budget for decoding (default: unlimited)"),
            .init(name: "--max-megapixels", value: "N", help: "refuse larger photos (default: config, else 1000)"),
            .init(name: "--filter", value: "triangle|cubic|lanczos3", help: "resampling filter (default: cubic)"),
            .init(
                name: "--no-color-management", value: nil,
                help: "show tagged photos' numbers as sRGB (default: the colorManagement setting)"),
            .init(
                name: "--caption", value: "none|date|name|date+name|TEMPLATE",
                help: "caption text, e.g. \"{date} · {place}\" (tokens {date} {name} {place} {age}; default: config)"),
            .init(
                name: "--caption-position", value: "top-left|...|bottom-right",
                help: "caption corner: top-left, top-center, top-right, bottom-left, bottom-center, bottom-right"),
            .init(name: "--caption-size", value: "F", help: "caption height as a fraction of the short side (0.045)"),
            .init(name: "--locale", value: "LANG", help: "date style: iso, en, en-US, de, fr, es, it, nl, pt, ..."),
            .init(name: "--pair-with", value: "PHOTO", help: "show IMAGE and PHOTO side by side, a portrait pair"),
            .init(name: "--pair-portraits", help: "in a library, pair portrait photos in a row, as the player does"),
            .init(name: "--fade-from", value: "PHOTO", help: "render a crossfade step from PHOTO to IMAGE"),
            .init(name: "--fade-at", value: "F", help: "the step: IMAGE's share, 0 to 1 (default 0.5)"),
            .init(
                name: "--overlay", value: nil,
                help: "paint the config's overlay (clock, date, texts) over the picture; a clock when it has none"),
            .init(name: "--time", value: "YYYY-MM-DD HH:MM", help: "the overlay's time (default: now)"),
            .init(name: "--text", value: "VALUE", help: "a value for the overlay's texts, in their order (repeatable)"),
            .init(name: "--json", value: nil, help: "print the frames written as JSON (files, captions, places)"),
            .init(name: "--config", value: "FILE", help: "config file (default: see README)"),
        ],
        maximumArguments: nil)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        let command = "render"
        guard !parsed.arguments.isEmpty else { throw UsageError(command: command, message: "missing IMAGE") }
        let context: ConfigContext
        do {
            context = try ConfigContext.load(explicit: parsed.value("--config"))
        } catch {
            console.error("vitrine render: \(error)\n")
            return 1
        }
        let settings = context.settings
        let panel = try OptionValues.size(parsed, "--panel", command: command) ?? settings.display.headlessSize
        var options = try OptionValues.renderOptions(parsed, panel: panel, settings: settings, command: command)
        if options.caption.template.uses(.place) { options.places = places(settings) }
        let budgetMiB = try OptionValues.number(parsed, "--budget", in: 1...1_048_576, command: command)
        let budget = MemoryBudget(limit: budgetMiB.map { Int($0 * 1_048_576) } ?? Int.max / 2)
        let renderer = SlideRenderer(budget: budget, fontPath: settings.fontPath ?? TextRenderer.defaultFont)
        let fadeAt = try OptionValues.number(parsed, "--fade-at", in: 0...1, command: command)
        if fadeAt != nil, parsed.value("--fade-from") == nil {
            throw UsageError(command: command, message: "--fade-at needs --fade-from PHOTO")
        }
        let corner = try overlay(parsed, settings: settings, options: options)

        if let output = parsed.value("--output") {
            guard parsed.arguments.count == 1, parsed.value("--output-dir") == nil else {
                throw UsageError(command: command, message: "--output takes one IMAGE; use --output-dir for several")
            }
            guard let format = FrameWriter.Format(path: output) else {
                throw UsageError(command: command, message: "--output \(output): the name must end in .ppm or .png")
            }
            var slide = Self.slide(for: parsed.arguments[0])
            if let partner = parsed.value("--pair-with") {
                slide = Slide(pairing: slide, with: Self.slide(for: partner))
            }
            var fade: (from: Slide, weight: Int)?
            if let from = parsed.value("--fade-from") {
                fade = (Self.slide(for: from), Int(((fadeAt ?? 0.5) * Double(FrameBlender.fullWeight)).rounded()))
            }
            var report = Report(json: parsed.has("--json"))
            let status: Int32 =
                render(
                    slide, to: output, format: format, renderer: renderer, options: options, fade: fade,
                    corner: corner, report: &report) ? 0 : 1
            report.finish(console, written: status == 0 ? 1 : 0, failed: status == 0 ? 0 : 1)
            return status
        }
        guard parsed.value("--pair-with") == nil, parsed.value("--fade-from") == nil else {
            throw UsageError(command: command, message: "--pair-with and --fade-from take one IMAGE and --output FILE")
        }
        guard let directory = parsed.value("--output-dir") else {
            throw UsageError(command: command, message: "missing --output FILE or --output-dir DIR")
        }
        do {
            try FileBytes.createDirectories(directory)
        } catch {
            console.error("vitrine render: \(error)\n")
            return 1
        }
        var failures = 0
        var written = 0
        var report = Report(json: parsed.has("--json"))
        for argument in parsed.arguments {
            for slide in slides(in: argument, pairPortraits: parsed.has("--pair-portraits"), canvas: options.canvas) {
                let output = "\(directory)/\(slide.id.description.replacingSlashes()).png"
                if render(
                    slide, to: output, format: .png, renderer: renderer, options: options, fade: nil, corner: corner,
                    report: &report)
                {
                    written += 1
                } else {
                    failures += 1
                }
            }
        }
        if report.json {
            report.finish(console, written: written, failed: failures)
        } else {
            console.out(
                "\(written) frame(s) of \(panel) written to \(directory)\(failures > 0 ? ", \(failures) failed" : "")\n"
            )
        }
        return failures == 0 && written > 0 ? 0 : 1
    }

    /// The overlay's painter and lines for `--overlay`: the config's section (a clock in the locale's form when it
    /// has none), at `--time`, with the `--text` values in the texts' formats.
    private func overlay(_ parsed: ArgumentParser.Parsed, settings: Settings, options: RenderOptions)
        throws(UsageError) -> (painter: CornerOverlay, lines: [CornerOverlay.Line])?
    {
        let command = "render"
        guard parsed.has("--overlay") else {
            if parsed.value("--time") != nil || parsed.value("--text") != nil {
                throw UsageError(command: command, message: "--time and --text need --overlay")
            }
            return nil
        }
        var overlay = settings.overlay ?? OverlaySettings()
        if settings.overlay == nil { overlay.clock = .locale }
        let time: LocalTime
        if let text = parsed.value("--time") {
            guard let parsedTime = Self.localTime(text) else {
                throw UsageError(command: command, message: "--time \(text): expected YYYY-MM-DD HH:MM")
            }
            time = parsedTime
        } else {
            time = LocalTime.now()
        }
        let values = parsed.all("--text")
        guard values.count <= overlay.texts.count else {
            throw UsageError(
                command: command,
                message: "\(values.count) --text values for the \(overlay.texts.count) texts of the overlay section")
        }
        let locale = options.caption.locale
        let clock = ClockMachine(
            settings: ClockMachine.Settings(
                clock: overlay.clock.format(locale: locale), date: overlay.date ? locale : nil))
        let lines = CornerOverlay.lines(
            clock: clock.lines(at: time), clockIsOn: clock.settings.clock != nil,
            texts: zip(overlay.texts, values).map { $0.line(value: $1) })
        do {
            let painter = try CornerOverlay(
                settings: overlay, canvas: options.canvas, fontPath: settings.fontPath ?? TextRenderer.defaultFont)
            return (painter, lines)
        } catch {
            throw UsageError(command: command, message: "--overlay: \(error)")
        }
    }

    /// `YYYY-MM-DD HH:MM` (or with a `T`), as the frame's wall would show it.
    static func localTime(_ text: String) -> LocalTime? {
        let fields = text.split(whereSeparator: { "-: T".contains($0) }).map { Int($0) }
        guard fields.count == 5, let year = fields[0], let month = fields[1], let day = fields[2],
            let hour = fields[3], let minute = fields[4], (1...12).contains(month), (1...31).contains(day),
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return LocalTime(epoch: 0, year: year, month: month, day: day, hour: hour, minute: minute, second: 0)
    }

    /// The place index for `{place}`: the config's `placesFile`, else the installed one; nil (said on standard
    /// error) when there is none or it cannot be read, and `{place}` stays empty.
    private func places(_ settings: Settings) -> PlaceIndex? {
        guard let path = PlaceIndex.path(settings: settings) else {
            console.error(
                "vitrine render: no place index (placesFile, or \(PlaceIndex.installedPaths().joined(separator: ", "))): "
                    + "{place} stays empty\n")
            return nil
        }
        do {
            return try PlaceIndex.load(path: path)
        } catch {
            console.error("vitrine render: \(error); {place} stays empty\n")
            return nil
        }
    }

    /// What `--json` prints: every frame written, with its files, captions and places, then the counts.
    struct Report {
        let json: Bool
        var frames: [JSONWriter.Value] = []

        init(json: Bool) {
            self.json = json
        }

        mutating func add(output: String, size: Size, rendered: SlideRenderer.Rendered) {
            let places = rendered.places.map { place -> JSONWriter.Value in
                guard let place else { return .null }
                return .object([
                    ("name", place.name.map { .string($0) } ?? .null), ("region", .string(place.region)),
                    ("country", .string(place.country)), ("countryCode", .string(place.countryCode)),
                    ("kilometres", .decimal(place.kilometres)), ("caption", .string(place.caption)),
                ])
            }
            frames.append(
                .object([
                    ("output", .string(output)), ("size", .string("\(size)")),
                    ("files", .array(rendered.files.map { .string($0) })),
                    ("captions", .array(rendered.captions.map { $0.map { .string($0) } ?? .null })),
                    ("places", .array(places)), ("warnings", .array(rendered.warnings.map { .string($0) })),
                ]))
        }

        func finish(_ console: Console, written: Int, failed: Int) {
            guard json else { return }
            let document = JSONWriter.Value.object([
                ("frames", .array(frames)), ("written", .number(written)), ("failed", .number(failed)),
            ])
            console.out(JSONWriter.write(document) + "\n")
        }
    }

    /// A single photo file as a slide named after the file.
    static func slide(for path: String) -> Slide {
        let base = path.split(separator: "/").last.map(String.init) ?? path
        let stem = String(base[..<(base.lastIndex(of: ".") ?? base.endIndex)])
        return Slide(id: SlideID(category: "", name: stem), original: path, renditions: [])
    }

    /// The slides an argument stands for: a file is one; a folder is a library, every slide of every category.
    private func slides(in argument: String, pairPortraits: Bool, canvas: Size) -> [Slide] {
        var status = stat()
        guard stat(argument, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            return [Self.slide(for: argument)]
        }
        let library = Library(root: argument)
        let headers = FrameRenderer(budget: MemoryBudget(limit: 1 << 20))
        var found: [Slide] = []
        do {
            for category in try library.categories() {
                var slides = try library.slides(in: category)
                if pairPortraits && canvas.width > canvas.height {
                    slides = PortraitPairing.pair(slides) { try? headers.header(of: $0).displayedSize }
                }
                found += slides
            }
        } catch {
            console.error("vitrine render: \(error)\n")
        }
        return found
    }

    private func render(
        _ slide: Slide, to output: String, format: FrameWriter.Format, renderer: SlideRenderer, options: RenderOptions,
        fade: (from: Slide, weight: Int)?, corner: (painter: CornerOverlay, lines: [CornerOverlay.Line])?,
        report: inout Report
    ) -> Bool {
        do {
            let rendered = try renderer.render(slide, options: options)
            let frame = rendered.frame
            if let fade {
                // Mixed in place: each pixel is read before it is written.
                let from = try renderer.render(fade.from, options: options).frame
                FrameBlender.blend(
                    from: from.pixels, to: frame.pixels, weight: fade.weight, into: frame.pixels,
                    count: frame.size.pixelCount)
            }
            if let corner {
                _ = corner.painter.paint(
                    corner.lines, rotation: options.rotation, into: frame.pixels, stride: frame.size.width)
            }
            try FrameWriter.write(frame, to: output, format: format)
            for warning in rendered.warnings { console.error("vitrine render: \(warning)\n") }
            let sources = zip(rendered.files, rendered.plans).map { file, plan in
                "\(file) (\(plan.header.size), orientation \(plan.header.orientation.rawValue), decoded at "
                    + "\(plan.scaleDescription))"
            }
            let step = fade.map { " at \($0.weight * 100 / 256) % of the fade from \($0.from.id.name)" }
            if report.json {
                report.add(output: output, size: frame.size, rendered: rendered)
            } else {
                let captions = rendered.captions.compactMap { $0 }.map { "\"\($0)\"" }
                let said = captions.isEmpty ? "" : ", caption \(captions.joined(separator: " + "))"
                console.out("\(output): \(frame.size) from \(sources.joined(separator: " + "))\(step ?? "")\(said)\n")
            }
            return true
        } catch let error as ImageError {
            console.error("vitrine render: \(error)\n")
        } catch {
            console.error("vitrine render: \(error)\n")
        }
        return false
    }
}

extension String {
    func replacingSlashes() -> String {
        String(map { $0 == "/" ? "_" : $0 })
    }
}
