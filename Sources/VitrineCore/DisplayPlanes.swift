/// A hardware plane of a DRM card as the kernel describes it: what it is, which CRTCs it can feed, the pixel
/// formats it scans out of linear buffers (the only kind a dumb buffer is) and where it sits in the stack.
public struct DisplayPlane: Sendable, Equatable {
    public enum Kind: String, Sendable { case primary, overlay, cursor }

    /// The plane's `zpos` property: its place in the stack and whether it may be moved.
    public struct Stacking: Sendable, Equatable {
        public var value: UInt64
        public var range: ClosedRange<UInt64>
        public var mutable: Bool
        public init(value: UInt64, range: ClosedRange<UInt64>, mutable: Bool) {
            self.value = value
            self.range = range
            self.mutable = mutable
        }
    }

    public var id: UInt32
    public var kind: Kind
    /// Bit N set: the plane can feed the card's Nth CRTC.
    public var crtcs: UInt32
    /// DRM fourcc codes.
    public var formats: [UInt32]
    public var stacking: Stacking?

    public init(id: UInt32, kind: Kind, crtcs: UInt32, formats: [UInt32], stacking: Stacking? = nil) {
        self.id = id
        self.kind = kind
        self.crtcs = crtcs
        self.formats = formats
        self.stacking = stacking
    }

    public func feeds(crtcIndex: Int) -> Bool {
        crtcIndex >= 0 && crtcIndex < 32 && crtcs & (1 << UInt32(crtcIndex)) != 0
    }
}

/// DRM's fourcc pixel format codes (drm_fourcc.h): four ASCII characters, the first in the low byte.
public enum FourCC {
    public static let xrgb8888 = code("XR24")
    public static let argb8888 = code("AR24")
    /// Y' plane, then one plane of Cb and Cr interleaved, both halved in each direction: what hardware decoders
    /// (V4L2 M2M, VA-API) give and vc4 scans out.
    public static let nv12 = code("NV12")
    /// Y', Cb and Cr in three planes, chroma halved in each direction: libavcodec's software output for 8-bit 4:2:0.
    public static let yuv420 = code("YU12")

    public static func code(_ text: String) -> UInt32 {
        var value: UInt32 = 0
        for (index, byte) in text.utf8.prefix(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(index)) }
        return value
    }

    public static func name(_ code: UInt32) -> String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * UInt32($0))) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return "0x" + String(code, radix: 16) }
        return String(decoding: bytes, as: UTF8.self).trimmingSuffix(" ")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ character: Character) -> String {
        var text = self
        while text.last == character { text.removeLast() }
        return text
    }
}

/// The kernel's IN_FORMATS blob (struct drm_format_modifier_blob, drm_mode.h): a header, the formats, then
/// modifier entries each naming up to 64 of the formats by a bitmask from an offset.
public enum FormatModifierBlob {
    /// DRM_FORMAT_MOD_LINEAR.
    static let linear: UInt64 = 0

    /// The formats the blob pairs with the linear modifier, in its order; nil when the blob is not one (a version
    /// other than 1, or a count or offset that reaches past its end). Every size is checked arithmetic: the blob
    /// comes from a driver, and a wrong one must not read past it.
    public static func linearFormats(_ bytes: [UInt8]) -> [UInt32]? {
        guard bytes.count >= 24, word(bytes, 0) == 1 else { return nil }
        let formatCount = Int(word(bytes, 8))
        let formatsOffset = Int(word(bytes, 12))
        let modifierCount = Int(word(bytes, 16))
        let modifiersOffset = Int(word(bytes, 20))
        guard fits(offset: formatsOffset, count: formatCount, size: 4, in: bytes.count),
            fits(offset: modifiersOffset, count: modifierCount, size: 24, in: bytes.count)
        else { return nil }
        var usable = [Bool](repeating: false, count: formatCount)
        for entry in 0..<modifierCount {
            let base = modifiersOffset + entry * 24
            let mask = UInt64(word(bytes, base)) | UInt64(word(bytes, base + 4)) << 32
            let first = Int(word(bytes, base + 8))
            let modifier = UInt64(word(bytes, base + 16)) | UInt64(word(bytes, base + 20)) << 32
            guard modifier == Self.linear else { continue }
            for bit in 0..<64 where mask & (1 << UInt64(bit)) != 0 {
                let (index, overflow) = first.addingReportingOverflow(bit)
                if !overflow, index < formatCount { usable[index] = true }
            }
        }
        return (0..<formatCount).filter { usable[$0] }.map { word(bytes, formatsOffset + $0 * 4) }
    }

    private static func fits(offset: Int, count: Int, size: Int, in length: Int) -> Bool {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
        let (end, overflowEnd) = offset.addingReportingOverflow(bytes)
        return !overflow && !overflowEnd && end <= length
    }

    private static func word(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }
}

/// Where a clip's pictures can go on a CRTC without their conversion to RGB: the primary plane, when it scans out
/// a Y'CbCr format, takes them as the decoder's planes (scaled on the CPU into a buffer the screen's size; the
/// plane converts the colours). The primary, not an overlay: it is at the bottom of every stack, so a plane above
/// it can carry the clock and captions whether or not the driver lets planes be restacked (vkms has no `zpos`),
/// and on vc4 (Raspberry Pi) every plane takes the same formats.
public struct VideoPlanes: Sendable, Equatable {
    public var video: UInt32
    /// NV12 where the plane takes it, else YUV420.
    public var format: UInt32
    /// A plane above the video that takes ARGB8888, for what is drawn over a clip; nil when there is none.
    public var text: UInt32?
    /// The `zpos` to give the text plane, when its own is not above the video's; nil when it is (or there is none).
    public var textStacking: UInt64?

    public init(video: UInt32, format: UInt32, text: UInt32?, textStacking: UInt64? = nil) {
        self.video = video
        self.format = format
        self.text = text
        self.textStacking = textStacking
    }

    /// The planes for the CRTC at `crtcIndex`, or nil when its primary plane takes neither NV12 nor YUV420.
    public static func choose(from planes: [DisplayPlane], crtcIndex: Int) -> VideoPlanes? {
        let usable = planes.filter { $0.feeds(crtcIndex: crtcIndex) }
        guard let primary = usable.first(where: { $0.kind == .primary }) else { return nil }
        let format: UInt32
        if primary.formats.contains(FourCC.nv12) {
            format = FourCC.nv12
        } else if primary.formats.contains(FourCC.yuv420) {
            format = FourCC.yuv420
        } else {
            return nil
        }
        let text = usable.first { plane in
            plane.kind == .overlay && plane.formats.contains(FourCC.argb8888) && isAbove(plane, primary)
        }
        return VideoPlanes(
            video: primary.id, format: format, text: text?.id, textStacking: text.flatMap { raise($0, above: primary) })
    }

    /// The `zpos` that puts `plane` just above `primary`; nil when it is there already.
    private static func raise(_ plane: DisplayPlane, above primary: DisplayPlane) -> UInt64? {
        guard let over = plane.stacking, let under = primary.stacking, over.value <= under.value else { return nil }
        return max(over.range.lowerBound, under.value + 1)
    }

    /// Without `zpos` the kernel stacks overlays over the primary; with it, the overlay must be above or be
    /// movable above.
    private static func isAbove(_ plane: DisplayPlane, _ primary: DisplayPlane) -> Bool {
        guard let over = plane.stacking, let under = primary.stacking else { return true }
        if over.value > under.value { return true }
        return over.mutable && over.range.upperBound > under.value
    }
}
