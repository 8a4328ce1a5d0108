import Testing

@testable import VitrineCore

struct DisplayPlanesTests {
    /// vkms's IN_FORMATS blob for its primary plane on Linux 7.3, as `modetest -p` printed it in the guest.
    static let vkmsBlob: [UInt8] = hex(
        """
        01000000000000002100000018000000 01000000a00000004152323441423234
        42413234524132345852323458423234 52473234424732345852343858423438
        41523438414234385247313642473136 4e5631324e5631364e5632344e563231
        4e5636314e5634325955313259553136 59553234595631325956313659563234
        50303130503031325030313652312020 52322020523420205238202000000000
        ffffffff010000000000000000000000 0000000000000000
        """)

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter(\.isHexDigit))
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
    }

    static func little(_ words: [UInt32]) -> [UInt8] {
        words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
    }

    /// A blob of `formats` with modifier entries (mask, first format, modifier).
    static func blob(formats: [UInt32], modifiers: [(UInt64, UInt32, UInt64)], version: UInt32 = 1) -> [UInt8] {
        let formatsOffset: UInt32 = 24
        let modifiersOffset = formatsOffset + UInt32(formats.count * 4)
        var bytes = little([version, 0, UInt32(formats.count), formatsOffset, UInt32(modifiers.count), modifiersOffset])
        bytes += little(formats)
        for (mask, first, modifier) in modifiers {
            bytes += little([
                UInt32(truncatingIfNeeded: mask), UInt32(mask >> 32), first, 0, UInt32(truncatingIfNeeded: modifier),
                UInt32(modifier >> 32),
            ])
        }
        return bytes
    }

    @Test func fourCCsAreDRMsCodes() {
        // drm_fourcc.h: DRM_FORMAT_NV12 0x3231564e, DRM_FORMAT_XRGB8888 0x34325258, DRM_FORMAT_YUV420 0x32315559.
        #expect(FourCC.nv12 == 0x3231_564E)
        #expect(FourCC.xrgb8888 == 0x3432_5258)
        #expect(FourCC.yuv420 == 0x3231_5559)
        #expect(FourCC.name(FourCC.nv12) == "NV12")
        #expect(FourCC.name(FourCC.code("R8  ")) == "R8")
        #expect(FourCC.name(0x0000_0001) == "0x1")
    }

    @Test func aRealKernelsBlobGivesItsFormats() throws {
        let formats = try #require(FormatModifierBlob.linearFormats(Self.vkmsBlob))
        #expect(formats.count == 33)
        #expect(formats.first == FourCC.argb8888)
        #expect(formats.contains(FourCC.nv12) && formats.contains(FourCC.yuv420) && formats.contains(FourCC.xrgb8888))
        #expect(FourCC.name(formats[formats.count - 1]) == "R8")
    }

    @Test func onlyFormatsPairedWithTheLinearModifierCount() throws {
        let tiled: UInt64 = 0x0100_0000_0000_0001  // I915_FORMAT_MOD_X_TILED
        let bytes = Self.blob(
            formats: [FourCC.xrgb8888, FourCC.nv12, FourCC.argb8888],
            modifiers: [(0b101, 0, 0), (0b010, 0, tiled), (0b1, 2, tiled)])
        #expect(FormatModifierBlob.linearFormats(bytes) == [FourCC.xrgb8888, FourCC.argb8888])
        // An entry whose offset moves its mask: bit 0 of an entry from 1 is the second format.
        let shifted = Self.blob(formats: [FourCC.xrgb8888, FourCC.nv12], modifiers: [(0b1, 1, 0)])
        #expect(FormatModifierBlob.linearFormats(shifted) == [FourCC.nv12])
    }

    @Test func aBlobThatIsNotOneIsRefused() {
        let good = Self.blob(formats: [FourCC.nv12], modifiers: [(1, 0, 0)])
        #expect(FormatModifierBlob.linearFormats(good) == [FourCC.nv12])
        #expect(FormatModifierBlob.linearFormats(Self.blob(formats: [FourCC.nv12], modifiers: [], version: 2)) == nil)
        #expect(FormatModifierBlob.linearFormats(Array(good.dropLast())) == nil)
        #expect(FormatModifierBlob.linearFormats(Array(good.prefix(20))) == nil)
        var huge = good
        huge.replaceSubrange(8..<12, with: Self.little([0xFFFF_FFFF]))
        #expect(FormatModifierBlob.linearFormats(huge) == nil)
        var far = good
        far.replaceSubrange(20..<24, with: Self.little([0xFFFF_FFF0]))
        #expect(FormatModifierBlob.linearFormats(far) == nil)
        // A mask reaching past the formats names none of the missing ones.
        let past = Self.blob(formats: [FourCC.nv12], modifiers: [(UInt64.max, 0, 0)])
        #expect(FormatModifierBlob.linearFormats(past) == [FourCC.nv12])
    }

    static let rgb = [FourCC.xrgb8888, FourCC.argb8888]

    @Test func clipsGoOnAPrimaryThatTakesYCbCrWithTextAbove() {
        // vkms: every plane takes NV12, no zpos, one CRTC.
        let planes = [
            DisplayPlane(id: 35, kind: .primary, crtcs: 1, formats: Self.rgb + [FourCC.nv12, FourCC.yuv420]),
            DisplayPlane(id: 40, kind: .overlay, crtcs: 1, formats: Self.rgb + [FourCC.nv12]),
            DisplayPlane(id: 45, kind: .cursor, crtcs: 1, formats: Self.rgb),
        ]
        #expect(VideoPlanes.choose(from: planes, crtcIndex: 0) == VideoPlanes(video: 35, format: FourCC.nv12, text: 40))
        // The same planes seen from a CRTC they cannot feed.
        #expect(VideoPlanes.choose(from: planes, crtcIndex: 1) == nil)
    }

    @Test func aPrimaryWithoutYCbCrGivesNoPlanes() {
        // virtio-gpu and bochs: an RGB primary and a cursor.
        let planes = [
            DisplayPlane(id: 31, kind: .primary, crtcs: 1, formats: Self.rgb),
            DisplayPlane(id: 33, kind: .cursor, crtcs: 1, formats: [FourCC.argb8888]),
        ]
        #expect(VideoPlanes.choose(from: planes, crtcIndex: 0) == nil)
        // A YUV overlay is not used: the primary would be under it, and with it the clock.
        let withOverlay = planes + [DisplayPlane(id: 34, kind: .overlay, crtcs: 1, formats: [FourCC.nv12])]
        #expect(VideoPlanes.choose(from: withOverlay, crtcIndex: 0) == nil)
    }

    @Test func yuv420IsTakenWhereNV12IsNot() {
        let planes = [DisplayPlane(id: 1, kind: .primary, crtcs: 0b10, formats: Self.rgb + [FourCC.yuv420])]
        #expect(
            VideoPlanes.choose(from: planes, crtcIndex: 1) == VideoPlanes(video: 1, format: FourCC.yuv420, text: nil))
    }

    @Test func theTextPlaneMustBeAboveOrMovableAbove() {
        func stack(_ value: UInt64, mutable: Bool) -> DisplayPlane.Stacking {
            .init(value: value, range: 0...7, mutable: mutable)
        }
        let primary = DisplayPlane(
            id: 1, kind: .primary, crtcs: 1, formats: Self.rgb + [FourCC.nv12], stacking: stack(2, mutable: false))
        let below = DisplayPlane(id: 2, kind: .overlay, crtcs: 1, formats: Self.rgb, stacking: stack(1, mutable: false))
        let movable = DisplayPlane(
            id: 3, kind: .overlay, crtcs: 1, formats: Self.rgb, stacking: stack(0, mutable: true))
        let noAlpha = DisplayPlane(id: 4, kind: .overlay, crtcs: 1, formats: [FourCC.xrgb8888])
        #expect(VideoPlanes.choose(from: [primary, below], crtcIndex: 0)?.text == nil)
        #expect(VideoPlanes.choose(from: [primary, below, movable], crtcIndex: 0)?.text == 3)
        // Moved just above the primary, where it is not already.
        #expect(VideoPlanes.choose(from: [primary, below, movable], crtcIndex: 0)?.textStacking == 3)
        let above = DisplayPlane(id: 5, kind: .overlay, crtcs: 1, formats: Self.rgb, stacking: stack(4, mutable: true))
        #expect(VideoPlanes.choose(from: [primary, above], crtcIndex: 0)?.text == 5)
        #expect(VideoPlanes.choose(from: [primary, above], crtcIndex: 0)?.textStacking == nil)
        #expect(VideoPlanes.choose(from: [primary, noAlpha], crtcIndex: 0)?.text == nil)
    }
}
