import CLinux
import VitrineCore
import VitrineImage
import VitrinePlatform
import VitrineRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine bench`: decode-to-frame time per photo and the process's peak memory.
struct BenchCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "bench",
        synopsis:
            "DIR-OR-PHOTO... --panel WxH [--runs N] [--fit contain|cover|contain-blur] [--tsv] | --blend --panel WxH "
            + "| --overlay --panel WxH | --places FILE | --clip FILE --panel WxH [--decoder auto|software|v4l2m2m|vaapi]",
        summary: """
            Renders each photo (a folder: its JPEG, PNG, WebP, HEIF and AVIF files) to a panel frame --runs times and prints
            the min, median and max time of the whole path (header, reduced decode, orientation, resampling,
            placement), the reduction chosen, and the process's peak resident memory. --blend instead times one crossfade step at
            the panel size against copying a frame (what a cut costs), both measured here. --overlay times a minute's
            redraw of the clock and date (taken off, painted again, the corner copied between the scanout buffers)
            against copying a frame. --places times place lookups in an index (for {place} captions), near places and
            anywhere on the globe, against finding the nearest place by reading every record, both measured here.
            --clip decodes and scales every picture of a clip onto the panel as the player would and says whether
            this machine keeps up with the clip's rate.
            """,
        options: [
            .init(name: "--panel", value: "WxH", help: "the panel's scanout size"),
            .init(name: "--runs", value: "N", help: "renders per photo (default 5)"),
            .init(name: "--fit", value: "contain|cover|contain-blur", help: "placement (default contain)"),
            .init(name: "--blend", value: nil, help: "time a crossfade step instead of decoding"),
            .init(name: "--overlay", value: nil, help: "time the clock's minute redraw instead of decoding"),
            .init(name: "--places", value: "FILE", help: "time place lookups in this index instead of decoding"),
            .init(name: "--rotate", value: "0|90|180|270", help: "clockwise turn of the picture on the panel"),
            .init(name: "--filter", value: "triangle|cubic|lanczos3", help: "resampling filter (default: cubic)"),
            .init(
                name: "--no-color-management", value: nil,
                help: "show tagged photos' numbers as sRGB (default: the colorManagement setting)"),
            .init(name: "--clip", value: "FILE", help: "time a clip's pictures instead of decoding photos"),
            .init(
                name: "--decoder", value: "auto|software|v4l2m2m|vaapi", help: "the clip's decoder (default: auto)"),
            .init(name: "--tsv", value: nil, help: "tab-separated output for scripts"),
        ],
        maximumArguments: nil)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        let command = "bench"
        if let index = parsed.value("--places") {
            let runs = Int(try OptionValues.number(parsed, "--runs", in: 1...1_000_000, command: command) ?? 10000)
            return places(index, runs: runs, tsv: parsed.has("--tsv"))
        }
        if parsed.has("--blend") || parsed.has("--overlay") {
            guard let panel = try OptionValues.size(parsed, "--panel", command: command) else {
                throw UsageError(command: command, message: "missing --panel WxH")
            }
            let runs = Int(try OptionValues.number(parsed, "--runs", in: 1...10000, command: command) ?? 200)
            if parsed.has("--overlay") { return overlay(panel: panel, runs: runs, tsv: parsed.has("--tsv")) }
            return blend(panel: panel, runs: runs, tsv: parsed.has("--tsv"))
        }
        if let clip = parsed.value("--clip") {
            guard let panel = try OptionValues.size(parsed, "--panel", command: command) else {
                throw UsageError(command: command, message: "missing --panel WxH")
            }
            let options = try OptionValues.renderOptions(parsed, panel: panel, settings: Settings(), command: command)
            let name = parsed.value("--decoder") ?? "auto"
            guard let decoding = VideoDecoding(rawValue: name) else {
                throw UsageError(
                    command: command, message: "--decoder \(name): expected auto, software, v4l2m2m or vaapi")
            }
            return self.clip(clip, options: options, decoding: decoding, tsv: parsed.has("--tsv"))
        }
        guard !parsed.arguments.isEmpty else { throw UsageError(command: command, message: "missing DIR or PHOTO") }
        guard let panel = try OptionValues.size(parsed, "--panel", command: command) else {
            throw UsageError(command: command, message: "missing --panel WxH")
        }
        let runs = Int(try OptionValues.number(parsed, "--runs", in: 1...10000, command: command) ?? 5)
        let options = try OptionValues.renderOptions(parsed, panel: panel, settings: Settings(), command: command)
        let tsv = parsed.has("--tsv")

        var files: [String] = []
        for argument in parsed.arguments {
            files += Self.photoFiles(argument)
        }
        guard !files.isEmpty else {
            console.error("vitrine bench: no JPEG files in \(parsed.arguments.joined(separator: " "))\n")
            return 1
        }
        let renderer = FrameRenderer(budget: MemoryBudget(limit: Int.max / 2))
        if tsv {
            console.out("file\twidth\theight\tscale\tdecoded\tmin_ms\tmedian_ms\tmax_ms\n")
        } else {
            console.out(
                "vitrine bench: \(files.count) photo(s) to \(panel) \(options.fit.rawValue), \(runs) run(s) each\n")
            console.out(
                "photo".padding(44) + "size".padding(12) + "scale".padding(6) + "min ms".padding(9)
                    + "median ms".padding(11) + "max ms\n")
        }
        var totalMedian = 0.0
        var failures = 0
        for file in files {
            var times: [Double] = []
            var plan: DecodePlan?
            do {
                for _ in 0..<runs {
                    let start = MonotonicClock.seconds()
                    let result = try renderer.render(file, options: options)
                    times.append(MonotonicClock.seconds() - start)
                    plan = result.plan
                }
            } catch {
                failures += 1
                console.error("vitrine bench: skipped \(error)\n")
                continue
            }
            guard let plan else { continue }
            times.sort()
            let median = Self.median(times)
            totalMedian += median
            let name = file.split(separator: "/").last.map(String.init) ?? file
            let cells = [
                Self.ms(times[0]), Self.ms(median), Self.ms(times[times.count - 1]),
            ]
            if tsv {
                console.out(
                    ([
                        name, "\(plan.header.size.width)", "\(plan.header.size.height)", plan.scaleDescription,
                        "\(plan.decodedSize)",
                    ] + cells).joined(separator: "\t") + "\n")
            } else {
                console.out(
                    name.padding(44) + "\(plan.header.size)".padding(12) + plan.scaleDescription.padding(6)
                        + cells[0].padding(9) + cells[1].padding(11) + cells[2] + "\n")
            }
        }
        let peak = vitrine_peak_rss_kib()
        if tsv {
            console.out("total_median_ms\t\(Self.ms(totalMedian))\npeak_rss_kib\t\(peak)\n")
        } else {
            console.out("sum of medians: \(Self.ms(totalMedian)) ms\npeak RSS: \(Double(peak * 10 / 1024) / 10) MiB\n")
        }
        return failures == 0 ? 0 : 1
    }

    /// Times the clock's minute redraw as the player does it between two scanout buffers (the corner copied from
    /// the buffer on screen, the old lines taken off, the new ones painted) against a plain copy of a frame.
    private func overlay(panel: Size, runs: Int, tsv: Bool) -> Int32 {
        let budget = MemoryBudget(limit: Int.max / 2)
        let buffers: [Frame]
        let corner: CornerOverlay
        do throws(BenchFailure) {
            do {
                buffers = try (0..<2).map { _ throws(MemoryBudget.Exceeded) in
                    try Frame(size: panel, budget: budget, purpose: "a bench scanout buffer")
                }
            } catch {
                throw BenchFailure(message: "\(error)")
            }
            var settings = OverlaySettings()
            settings.clock = ClockFormat("HH:mm").map { .pattern($0) } ?? .locale
            settings.date = true
            do {
                corner = try CornerOverlay(settings: settings, canvas: panel, fontPath: TextRenderer.defaultFont)
            } catch {
                throw BenchFailure(message: "\(error)")
            }
        } catch {
            console.error("vitrine bench: \(error.message)\n")
            return 1
        }
        for buffer in buffers {
            for index in 0..<panel.pixelCount {
                buffer.pixels[index] = UInt32(truncatingIfNeeded: index &* 2_654_435_761) & 0x00FF_FFFF
            }
        }
        func lines(_ run: Int) -> [CornerOverlay.Line] {
            let minute = run % 60
            return [
                CornerOverlay.Line("12:\(minute < 10 ? "0" : "")\(minute)", large: true),
                CornerOverlay.Line("2 December 2026"),
            ]
        }
        let stride = panel.width
        var front = 0
        guard var saved = corner.paint(lines(0), rotation: .none, into: buffers[front].pixels, stride: stride) else {
            console.error("vitrine bench: the overlay painted nothing\n")
            return 1
        }
        var redrawTimes: [Double] = []
        var copyTimes: [Double] = []
        var stripPixels = 0
        for run in 1...runs {
            let back = 1 - front
            let start = MonotonicClock.seconds()
            let rect = saved.rect
            for row in rect.y..<(rect.y + rect.height) {
                (buffers[back].pixels + row * stride + rect.x).update(
                    from: buffers[front].pixels + row * stride + rect.x, count: rect.width)
            }
            saved.restore(into: buffers[back].pixels, stride: stride)
            if let next = corner.paint(lines(run), rotation: .none, into: buffers[back].pixels, stride: stride) {
                saved = next
            }
            let middle = MonotonicClock.seconds()
            stripPixels = max(stripPixels, rect.width * rect.height)
            front = back
            buffers[1 - front].pixels.update(from: buffers[front].pixels, count: panel.pixelCount)
            let end = MonotonicClock.seconds()
            redrawTimes.append(middle - start)
            copyTimes.append(end - middle)
        }
        let redraw = Self.median(redrawTimes)
        let copy = Self.median(copyTimes)
        let ratio = JSONText.number(copy > 0 ? redraw / copy : 0)
        if tsv {
            console.out(
                "panel\tredraw_median_ms\tcopy_median_ms\tratio\tstrip_pixels\n"
                    + "\(panel)\t\(Self.ms(redraw))\t\(Self.ms(copy))\t\(ratio)\t\(stripPixels)\n")
        } else {
            console.out(
                "clock redraw at \(panel): median \(Self.ms(redraw)) ms over a \(stripPixels)-pixel corner; copying a "
                    + "frame \(Self.ms(copy)) ms; ratio \(ratio) (\(runs) runs)\n")
        }
        return 0
    }

    /// Times crossfade steps (two frames mixed into a third buffer, as into a scanout buffer) against a plain copy
    /// of a frame, the whole cost of a cut.
    private func blend(panel: Size, runs: Int, tsv: Bool) -> Int32 {
        let budget = MemoryBudget(limit: Int.max / 2)
        let frames: [Frame]
        do {
            frames = try (0..<3).map { _ throws(MemoryBudget.Exceeded) in
                try Frame(size: panel, budget: budget, purpose: "a bench frame")
            }
        } catch {
            console.error("vitrine bench: \(error)\n")
            return 1
        }
        for index in 0..<panel.pixelCount {
            frames[0].pixels[index] = UInt32(truncatingIfNeeded: index &* 2_654_435_761)
            frames[1].pixels[index] = UInt32(truncatingIfNeeded: index &* 40503) ^ 0x00FF_FFFF
        }
        var blendTimes: [Double] = []
        var copyTimes: [Double] = []
        for run in 0..<runs {
            let start = MonotonicClock.seconds()
            FrameBlender.blend(
                from: frames[0].pixels, to: frames[1].pixels, weight: 1 + run % 255, into: frames[2].pixels,
                count: panel.pixelCount)
            let middle = MonotonicClock.seconds()
            frames[2].pixels.update(from: frames[1].pixels, count: panel.pixelCount)
            let end = MonotonicClock.seconds()
            blendTimes.append(middle - start)
            copyTimes.append(end - middle)
        }
        let blendMedian = Self.median(blendTimes)
        let copyMedian = Self.median(copyTimes)
        let ratio = copyMedian > 0 ? blendMedian / copyMedian : 0
        let ratioText = JSONText.number(ratio)
        let blendText = JSONText.number(blendMedian * 1000)
        let copyText = JSONText.number(copyMedian * 1000)
        if tsv {
            console.out(
                "panel\tblend_median_ms\tcopy_median_ms\tratio\n\(panel)\t\(blendText)\t\(copyText)\t\(ratioText)\n")
        } else {
            console.out(
                "crossfade step at \(panel): median \(blendText) ms; copying a frame (a cut) \(copyText) ms; ratio \(ratioText) (\(runs) runs)\n"
            )
        }
        return 0
    }

    /// Times lookups in a place index, each on its own (as a caption makes them), for photo-like points (a random
    /// place moved up to 2 km) and points anywhere on the globe (most of them far from any place, which a lookup
    /// gives up on soonest), against the nearest place found by reading every record. Each scanned point's nearest
    /// place is compared with the tree's, so the reference also checks the lookups.
    private func places(_ path: String, runs: Int, tsv: Bool) -> Int32 {
        let index: PlaceIndex
        do {
            index = try PlaceIndex.load(path: path)
        } catch {
            console.error("vitrine bench: \(error)\n")
            return 1
        }
        guard index.placeCount > 0 else {
            console.error("vitrine bench: \(path): no places\n")
            return 1
        }
        var generator = SeededGenerator(seed: 35)
        func random() -> Double { Double(generator.next() >> 11) / Double(1 << 53) }
        func nearPlace() -> GeoCoordinate? {
            guard let place = index.coordinate(at: Int(generator.next() % UInt64(index.placeCount))) else { return nil }
            let distance = 2 * random().squareRoot() / 111.2
            let angle = 2 * Double.pi * random()
            let latitude = max(-90, min(90, place.latitude + distance * sin(angle)))
            var longitude = place.longitude + distance * cos(angle) / max(0.01, cos(latitude * Double.pi / 180))
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            return GeoCoordinate(latitude: latitude, longitude: longitude)
        }
        func anywhere() -> GeoCoordinate? {
            GeoCoordinate(latitude: asin(2 * random() - 1) * 180 / Double.pi, longitude: 360 * random() - 180)
        }
        if tsv {
            console.out(
                "points\tlookups\tfound\tlookup_median_us\tlookup_p99_us\tscans\tscan_median_us\tscan_per_lookup\tdiffer\n"
            )
        }
        let scans = min(runs, 200)
        for (label, make) in [("near places", nearPlace), ("anywhere", anywhere)] {
            let points = (0..<runs).compactMap { _ in make() }
            var lookupTimes: [Double] = []
            var found = 0
            for point in points {
                let start = MonotonicClock.seconds()
                let place = try? index.lookup(point)
                lookupTimes.append(MonotonicClock.seconds() - start)
                if place != nil { found += 1 }
            }
            var scanTimes: [Double] = []
            var differ = 0
            for point in points.prefix(scans) {
                let start = MonotonicClock.seconds()
                let scanned = index.nearestByScan(point)
                scanTimes.append(MonotonicClock.seconds() - start)
                if let scanned, let tree = index.nearest(point), abs(tree.kilometres - scanned.kilometres) > 1e-6 {
                    differ += 1
                }
            }
            lookupTimes.sort()
            let lookup = Self.median(lookupTimes)
            let p99 = lookupTimes[min(lookupTimes.count - 1, lookupTimes.count * 99 / 100)]
            let scan = Self.median(scanTimes)
            // The lookup is thousands of times faster: the ratio is also given the other way up, so it keeps its
            // digits.
            let ratio = lookup > 0 ? scan / lookup : 0
            let us = { (seconds: Double) in JSONText.number(seconds * 1e6) }
            if tsv {
                console.out(
                    "\(label)\t\(points.count)\t\(found)\t\(us(lookup))\t\(us(p99))\t\(scanTimes.count)\t\(us(scan))\t"
                        + "\(JSONText.number(ratio))\t\(differ)\n")
            } else {
                console.out(
                    "place lookup, \(label): median \(us(lookup)) µs, p99 \(us(p99)) µs (\(points.count) lookups, "
                        + "\(found) found a place); reading all \(index.placeCount) places \(us(scan)) µs, "
                        + "\(Int(ratio.rounded())) times as long; \(differ) of \(scanTimes.count) nearest places differ\n"
                )
            }
        }
        return 0
    }

    /// A photo is itself; a folder stands for its photos (not those of its subfolders).
    static func photoFiles(_ argument: String) -> [String] {
        guard let names = try? Library.photoNames(in: argument) else { return [argument] }
        return names.map { "\(argument)/\($0)" }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    static func ms(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10000).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// A bench that cannot start, with the reason.
struct BenchFailure: Error {
    var message: String
}
