import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes each presented frame as `DIR/NNNNNN.ppm` and appends a JSON line to `DIR/presented.jsonl`; text
/// painted over the picture on screen (a banner, the clock's minute) goes to `DIR/overlay-NNNNNN.ppm` and
/// `DIR/overlays.jsonl`, numbered on their own so the slides' numbers stay the slides'.
public final class SnapshotWriter {
    public let directory: String
    private var sequence = 0
    private var overlaySequence = 0
    private let started: Double

    public init(directory: String, started: Double) throws(RuntimeError) {
        self.directory = directory
        self.started = started
        do {
            try FileBytes.createDirectories(directory)
        } catch {
            throw RuntimeError("create the snapshot folder", path: error.path, errno: error.errno)
        }
    }

    /// `fadeWeight` marks a crossfade step (the incoming slide's share of 256); such lines carry `"fade"`, its
    /// share from 0 to 1.
    public func write(_ frame: Frame, record: PresentRecord?, now: Double, fadeWeight: Int? = nil) {
        sequence += 1
        let name = String(sequence).leftPadded(to: 6)
        do {
            try FrameWriter.write(frame, to: "\(directory)/\(name).ppm", format: .ppm)
        } catch {
            return
        }
        var fields: [String] = ["\"seq\":\(sequence)"]
        if let record {
            fields.append("\"category\":\(JSONText.quote(record.category))")
            fields.append("\"slide\":\(JSONText.quote(record.slide))")
            fields.append("\"file\":\(record.file.map(JSONText.quote) ?? "null")")
            fields.append("\"decode_ms\":\(record.decodeMilliseconds.map { JSONText.number($0) } ?? "null")")
            fields.append("\"why\":\(record.why.map(JSONText.quote) ?? "null")")
            let captions = record.captions.map { $0.map(JSONText.quote) ?? "null" }
            fields.append("\"captions\":[\(captions.joined(separator: ","))]")
            if let time = record.clipTime { fields.append("\"clip_time\":\(JSONText.number(time))") }
        } else {
            fields.append("\"category\":null,\"slide\":null,\"file\":null,\"decode_ms\":null,\"why\":null")
        }
        if let fadeWeight { fields.append("\"fade\":\(JSONText.number(Double(fadeWeight) / 256))") }
        fields.append("\"t\":\(JSONText.number(now - started))")
        // The wall clock too, so a test can hold a slide against a time of day (a day-part's boundary).
        fields.append("\"wall\":\(JSONText.number((WallClock.seconds() * 1000).rounded() / 1000))")
        append("{" + fields.joined(separator: ",") + "}\n", to: "\(directory)/presented.jsonl")
    }

    /// Text painted over the picture on screen: the whole screen as it is now, and a line naming the picture it
    /// was painted over (`after`, that picture's `seq`).
    public func writeOverlay(_ frame: Frame, now: Double) {
        overlaySequence += 1
        do {
            try FrameWriter.write(
                frame, to: "\(directory)/overlay-\(String(overlaySequence).leftPadded(to: 6)).ppm", format: .ppm)
        } catch {
            return
        }
        append(
            "{\"seq\":\(overlaySequence),\"after\":\(sequence),\"t\":\(JSONText.number(now - started))}\n",
            to: "\(directory)/overlays.jsonl")
    }

    private func append(_ line: String, to path: String) {
        let file = Descriptor(taking: open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644))
        guard file.number >= 0 else { return }
        var bytes = Array(line.utf8)
        // The snapshots are for tests and benchmarks, which see a missing line themselves.
        _ = Glibc.write(file.number, &bytes, bytes.count)
        file.close()
    }
}
