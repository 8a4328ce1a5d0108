import Testing
import VitrineCore

@Suite struct EDIDTests {
    /// A base block as a monitor sends it: header, vendor DEL, product 0xA0B1, serial 12345, 53x30 cm, a name
    /// and a serial descriptor.
    static func block(name: String = "DELL P2419H", serial: String = "7J3K2X2") -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 128)
        bytes.replaceSubrange(0..<8, with: [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00])
        // "DEL": D=4, E=5, L=12 -> 0b0_00100_00101_01100 = 0x10AC.
        bytes[8] = 0x10
        bytes[9] = 0xAC
        bytes[10] = 0xB1
        bytes[11] = 0xA0
        bytes.replaceSubrange(12..<16, with: [0x39, 0x30, 0, 0])
        bytes[21] = 53
        bytes[22] = 30
        func descriptor(_ tag: UInt8, _ text: String) -> [UInt8] {
            var field = Array(text.utf8.prefix(13))
            if field.count < 13 { field += [0x0A] + [UInt8](repeating: 0x20, count: 12 - field.count) }
            return [0, 0, 0, tag, 0] + field
        }
        bytes.replaceSubrange(72..<90, with: descriptor(0xFC, name))
        bytes.replaceSubrange(90..<108, with: descriptor(0xFF, serial))
        return bytes
    }

    @Test func readsVendorNameSerialAndSize() throws {
        let edid = try #require(EDID.parse(Self.block()))
        #expect(edid.manufacturer == "DEL")
        #expect(edid.productCode == 0xA0B1)
        #expect(edid.serialNumber == 12345)
        #expect(edid.monitorName == "DELL P2419H")
        #expect(edid.serialText == "7J3K2X2")
        #expect(edid.sizeCentimetres == Size(width: 53, height: 30))
    }

    @Test func aThirteenCharacterNameHasNoTerminator() throws {
        #expect(try #require(EDID.parse(Self.block(name: "ABCDEFGHIJKLM"))).monitorName == "ABCDEFGHIJKLM")
    }

    @Test func refusesWhatIsNotAnEDID() {
        #expect(EDID.parse([]) == nil)
        #expect(EDID.parse([UInt8](repeating: 0xFF, count: 128)) == nil)
        #expect(EDID.parse(Array(Self.block().prefix(100))) == nil)
        var noName = Self.block()
        noName.replaceSubrange(72..<108, with: [UInt8](repeating: 0x01, count: 36))
        #expect(EDID.parse(noName)?.monitorName == nil)
    }
}
