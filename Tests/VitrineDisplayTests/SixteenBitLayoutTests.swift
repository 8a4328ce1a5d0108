import CLinux
import Testing

@testable import VitrineDisplay

@Suite struct SixteenBitLayoutTests {
    static func screenInfo(bits: UInt32, red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32 = 0)
        -> fb_var_screeninfo
    {
        var info = fb_var_screeninfo()
        info.bits_per_pixel = bits
        info.red.offset = red
        info.red.length = 5
        info.green.offset = green
        info.green.length = green == 5 ? 6 : 5
        info.blue.offset = blue
        info.blue.length = 5
        info.transp.length = alpha
        return info
    }

    @Test func theLayoutIsReadFromTheScreenInfo() {
        #expect(SixteenBitLayout(Self.screenInfo(bits: 16, red: 11, green: 5, blue: 0)) == .rgb565)
        #expect(SixteenBitLayout(Self.screenInfo(bits: 16, red: 0, green: 5, blue: 11)) == .bgr565)
        #expect(SixteenBitLayout(Self.screenInfo(bits: 16, red: 10, green: 5, blue: 0)) == nil, "5551 is not 565")
        #expect(SixteenBitLayout(Self.screenInfo(bits: 16, red: 0, green: 5, blue: 10, alpha: 1)) == nil)
        #expect(SixteenBitLayout(Self.screenInfo(bits: 32, red: 11, green: 5, blue: 0)) == nil)
    }

    @Test func pixelsKeepEachChannelsHighBitsWhereTheLayoutPutsThem() {
        #expect(SixteenBitLayout.rgb565.pack(0x00FF_0000) == 0xF800)
        #expect(SixteenBitLayout.bgr565.pack(0x00FF_0000) == 0x001F)
        #expect(SixteenBitLayout.rgb565.pack(0x0000_FF00) == 0x07E0)
        #expect(SixteenBitLayout.bgr565.pack(0x0000_00FF) == 0xF800)
        // 0x12 0x34 0x56: red 2, green 13, blue 10 in 5, 6 and 5 bits; the padding byte is ignored.
        #expect(SixteenBitLayout.rgb565.pack(0xFF12_3456) == 2 << 11 | 13 << 5 | 10)
        #expect(SixteenBitLayout.bgr565.pack(0xFF12_3456) == 10 << 11 | 13 << 5 | 2)
    }

    @Test func aRowIsConvertedWhole() {
        let source: [UInt32] = [0x00FF_FFFF, 0, 0x0080_8080]
        var out = [UInt16](repeating: 0xAAAA, count: 4)
        source.withUnsafeBufferPointer { pixels in
            out.withUnsafeMutableBytes { bytes in
                guard let from = pixels.baseAddress, let to = bytes.baseAddress else { return }
                SixteenBitLayout.rgb565.convert(row: from, count: 3, to: to)
            }
        }
        #expect(out == [0xFFFF, 0, 16 << 11 | 32 << 5 | 16, 0xAAAA])
    }
}
