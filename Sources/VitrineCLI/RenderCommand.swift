import VitrineCore
import VitrineImage

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
            background (contain) or cropped to fill (cover), optionally turned for a rotated panel. A folder is read
            as a library (categories, renditions). PPM (.ppm) or PNG (.png) output.
            """,
        options: [
            .init(name: "--panel", value: "WxH", help: "the panel's scanout size (default: display.headlessSize)"),
            .init(name: "--fit", value: "contain|cover", help: "placement (default: config fit, else contain)"),
            .init(name: "--rotate", value: "0|90|180|270", help: "clockwise turn of the picture on the panel"),
            .init(name: "--background", value: "RRGGBB", help: "letterbox colour (default: config, else 000000)"),
            .init(name: "--output", value: "FILE", help: "output file for a single photo (.ppm or .png)"),
            .init(name: "--output-dir", value: "DIR", help: "folder for one PNG per photo"),
            .init(name: "--budget", value: "MiB", help: "memory budget for decoding (default: unlimited)"),
            .init(name: "--max-megapixels", value: "N", help: "refuse larger photos (default: config, else 100)"),
            .init(name: "--filter", value: "triangle|cubic|lanczos3", help: "resampling filter (default: cubic)"),
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
        let options = try OptionValues.renderOptions(parsed, panel: panel, settings: settings, command: command)
        let budgetMiB = try OptionValues.number(parsed, "--budget", in: 1...1_048_576, command: command)
        let budget = MemoryBudget(limit: budgetMiB.map { Int($0 * 1_048_576) } ?? Int.max / 2)
        let renderer = FrameRenderer(budget: budget)

        if let output = parsed.value("--output") {
            guard parsed.arguments.count == 1, parsed.value("--output-dir") == nil else {
                throw UsageError(command: command, message: "--output takes one IMAGE; use --output-dir for several")
            }
            guard let format = FrameWriter.Format(path: output) else {
                throw UsageError(command: command, message: "--output \(output): the name must end in .ppm or .png")
            }
            return render(parsed.arguments[0], to: output, format: format, renderer: renderer, options: options) ? 0 : 1
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
        for argument in parsed.arguments {
            for (source, name) in photos(in: argument, options: options, renderer: renderer) {
                let output = "\(directory)/\(name).png"
                if render(source, to: output, format: .png, renderer: renderer, options: options) {
                    written += 1
                } else {
                    failures += 1
                }
            }
        }
        console.out(
            "\(written) frame(s) of \(panel) written to \(directory)\(failures > 0 ? ", \(failures) failed" : "")\n")
        return failures == 0 && written > 0 ? 0 : 1
    }

    /// The photos an argument stands for: a file is itself; a folder is a library, one picked file per slide.
    private func photos(in argument: String, options: RenderOptions, renderer: FrameRenderer) -> [(String, String)] {
        var status = stat()
        guard stat(argument, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            let base = argument.split(separator: "/").last.map(String.init) ?? argument
            return [(argument, String(base[..<(base.lastIndex(of: ".") ?? base.endIndex)]))]
        }
        let library = Library(root: argument)
        let picker = RenditionPicker(canvas: options.canvas, fit: options.fit)
        var found: [(String, String)] = []
        do {
            for category in try library.categories() {
                for slide in try library.slides(in: category) {
                    let choice = picker.pick(slide) { path in try? renderer.header(of: path).displayedSize }
                    guard let choice else { continue }
                    let flat = slide.id.description.replacingSlashes()
                    found.append((choice.path, flat))
                }
            }
        } catch {
            console.error("vitrine render: \(error)\n")
        }
        return found
    }

    private func render(
        _ source: String, to output: String, format: FrameWriter.Format, renderer: FrameRenderer,
        options: RenderOptions
    ) -> Bool {
        do {
            let (frame, plan) = try renderer.render(source, options: options)
            try FrameWriter.write(frame, to: output, format: format)
            console.out(
                "\(output): \(frame.size) from \(source) (\(plan.header.size), orientation "
                    + "\(plan.header.orientation.rawValue), decoded at \(plan.scaleDescription))\n")
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
