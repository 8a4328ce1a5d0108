import VitrineCore
import VitrineImage
import VitrinePlatform

extension BenchCommand {
    /// Decodes and scales every picture of a clip as the player would, and says whether this machine keeps up with
    /// the clip's rate: the time per picture against the clip's own (1 / frame rate), CPU time against the clip's
    /// length, and the peak resident memory.
    func clip(_ path: String, options: RenderOptions, decoding: VideoDecoding, tsv: Bool) -> Int32 {
        let budget = MemoryBudget(limit: Int.max / 2)
        let cpuBefore = ProcessMemory.cpuSeconds()
        let timing: ClipTiming
        do {
            timing = try ClipTiming.measure(path: path, options: options, decoding: decoding, budget: budget)
        } catch {
            console.error("vitrine bench: \(error)\n")
            return 1
        }
        // The NV12 scaling timed beside (one thread, so its wall time is its CPU time) is not the player's cost.
        let cpu = ProcessMemory.cpuSeconds() - cpuBefore - timing.scalePlanar.reduce(0, +)
        let rate = timing.header.frameRate > 0 ? timing.header.frameRate : 30
        let clipSeconds = Double(timing.pictures) / rate
        let perPicture = timing.pictures > 0 ? timing.wall / Double(timing.pictures) : 0
        let decode = Self.median(timing.decode)
        let scale = Self.median(timing.scale)
        let planar = timing.scalePlanar.isEmpty ? nil : Self.median(timing.scalePlanar)
        let peak = ProcessMemory.peakResidentBytes()
        let speed = timing.wall > 0 ? clipSeconds / timing.wall : 0
        let cpuShare = clipSeconds > 0 ? cpu / clipSeconds : 0
        if tsv {
            console.out(
                "clip\tdecoder\tpictures\tdecode_median_ms\tscale_median_ms\tscale_nv12_median_ms\tper_picture_ms\tspeed\t"
                    + "cpu_per_clip_second\tpeak_rss_mib\n"
                    + "\(timing.header.kind)\t\(timing.decoder)\t\(timing.pictures)\t\(Self.ms(decode))\t\(Self.ms(scale))\t"
                    + "\(planar.map(Self.ms) ?? "-")\t\(Self.ms(perPicture))\t\(Self.round(speed))\t\(Self.round(cpuShare))\t"
                    + "\(Self.round(Double(peak) / 1_048_576))\n")
        } else {
            console.out(
                "\(path): \(timing.header.kind), \(timing.pictures) pictures by \(timing.decoder) onto "
                    + "\(options.canvas): decode \(Self.ms(decode)) ms and scale \(Self.ms(scale)) ms a picture "
                    + "(median\(planar.map { "; into NV12 for a plane \(Self.ms($0)) ms" } ?? "")), \(Self.ms(perPicture)) ms in all against \(Self.ms(1 / rate)) ms the clip allows: "
                    + "\(Self.round(speed))x real time, CPU \(Self.round(cpuShare)) s per second of clip; peak "
                    + "resident \(Self.round(Double(peak) / 1_048_576)) MiB\n")
        }
        return 0
    }

    static func round(_ value: Double) -> String { JSONText.number((value * 100).rounded() / 100) }
}
