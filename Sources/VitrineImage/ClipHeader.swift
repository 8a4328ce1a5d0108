import VitrineCore

/// What Vitrine knows about a clip before playing it: the container and codec, the stored size and the turn its
/// display matrix asks for, the frame rate, the length, and what its decoder will hold.
public struct ClipHeader: Equatable, Sendable {
    /// The container as libavformat names it ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"), shortened for messages.
    public var container: String
    /// The codec, as FFmpeg names it ("h264", "hevc", "vp9", "av1").
    public var codec: String
    /// The stored size of a picture (before the display matrix's turn).
    public var size: Size
    /// The display matrix as an orientation: an iPhone's portrait clip is stored landscape, turned 90° to view.
    public var orientation: Orientation
    /// Frames per second (the stream's average; 0 when the file does not say).
    public var frameRate: Double
    /// Seconds; 0 when the file does not say.
    public var duration: Double
    /// Bits per sample of the pictures (8, 10 for HDR phone clips).
    public var bitDepth: Int
    /// The clip has a sound track.
    public var hasAudio: Bool
    /// When it was recorded, as an EXIF date ("YYYY:MM:DD HH:MM:SS"), from the container's creation time.
    public var recorded: String?

    public init(
        container: String, codec: String, size: Size, orientation: Orientation, frameRate: Double, duration: Double,
        bitDepth: Int, hasAudio: Bool, recorded: String?
    ) {
        self.container = container
        self.codec = codec
        self.size = size
        self.orientation = orientation
        self.frameRate = frameRate
        self.duration = duration
        self.bitDepth = bitDepth
        self.hasAudio = hasAudio
        self.recorded = recorded
    }

    /// Bytes the decoder holds while it plays: its reference pictures and those in flight on its threads (H.264
    /// keeps up to 16 at the largest levels; phones' clips use 4 or 5), at 4:2:0 and the clip's bit depth.
    public var decoderWorkspaceBytes: Int {
        let sample = bitDepth > 8 ? 2 : 1
        let picture = size.pixelCount * 3 / 2 * sample
        return picture * Self.picturesHeld
    }

    /// Reference pictures (6) and those the decoding threads work on (2), with one handed out.
    static let picturesHeld = 9

    /// In a few words for messages: "H.264 1280x720 30 fps".
    public var kind: String {
        let hundredths = Int((frameRate * 100).rounded())
        let number =
            hundredths % 100 == 0
            ? "\(hundredths / 100)" : "\(hundredths / 100).\(String(hundredths % 100).leftPadded(to: 2))"
        let rate = frameRate > 0 ? " \(number) fps" : ""
        return "\(Self.codecName(codec)) \(size)\(rate)"
    }

    static func codecName(_ codec: String) -> String {
        switch codec {
        case "h264": "H.264"
        case "hevc": "HEVC"
        case "vp9": "VP9"
        case "vp8": "VP8"
        case "av1": "AV1"
        case "mpeg4": "MPEG-4"
        default: codec
        }
    }

    /// The orientation a display matrix's rotation asks for. FFmpeg reports the angle counter-clockwise; the
    /// picture is turned the other way to view (a phone held upright records -90: turn 90° clockwise).
    public static func orientation(rotationDegrees: Double) -> Orientation {
        let clockwise = ((Int((-rotationDegrees).rounded()) % 360) + 360) % 360
        switch clockwise {
        case 80...100: return .rotated90
        case 170...190: return .rotated180
        case 260...280: return .rotated270
        default: return .up
        }
    }

    /// An ISO 8601 time as a container gives it ("2024-05-01T10:20:30.000000Z", Apple's local
    /// "2024-05-01T12:20:30+0200") as an EXIF date, the time of day as written.
    public static func exifDate(iso text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19 else { return nil }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        guard digits.allSatisfy({ bytes[$0] >= UInt8(ascii: "0") && bytes[$0] <= UInt8(ascii: "9") }),
            bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " ")
        else { return nil }
        let text = String(decoding: bytes[0..<19], as: UTF8.self)
        let date = text.prefix(10).replacingAll("-", with: ":")
        // A container written with no clock set says 1904 or 1970: no date at all.
        guard !date.hasPrefix("1904"), !date.hasPrefix("1970") else { return nil }
        return date + " " + text.suffix(8)
    }
}

extension Substring {
    fileprivate func replacingAll(_ old: Character, with new: Character) -> String {
        String(map { $0 == old ? new : $0 })
    }
}
