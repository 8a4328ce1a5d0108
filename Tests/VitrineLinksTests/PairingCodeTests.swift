import Testing
import VitrineCore
import VitrineImage

@testable import VitrineLinks

/// The pairing code: the page's link as a QR code from libqrencode, painted over the picture with its quiet zone
/// and taken off again.
@Suite struct PairingCodeTests {
    static let link = "http://192.168.1.20:8080/?token=" + String(repeating: "ab", count: 32)

    @Test func theLinkBecomesASquareCodeWithItsFinderPatterns() throws {
        let code = try #require(QRCodeEncoder.matrix(for: Self.link))
        #expect((code.width - 17) % 4 == 0 && code.width >= 21, "a version's width is 17 + 4 v")
        // The three 7x7 finder patterns: a dark ring, a light ring, a dark 3x3 core.
        for (left, top) in [(0, 0), (code.width - 7, 0), (0, code.width - 7)] {
            #expect(code.isDark(x: left, y: top) && code.isDark(x: left + 6, y: top + 6))
            #expect(!code.isDark(x: left + 1, y: top + 1))
            #expect(code.isDark(x: left + 3, y: top + 3))
        }
        #expect(code.modules.contains(false) && code.modules.contains(true))
    }

    @Test func theCodeIsPaintedOnWhiteAndTakenOffAgain() throws {
        let code = try #require(QRCodeEncoder.matrix(for: Self.link))
        let canvas = Size(width: 480, height: 320)
        var pixels = [UInt32](repeating: 0xFF80_8080, count: canvas.width * canvas.height)
        let saved = try #require(
            pixels.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.flatMap {
                    QRCodePainter.paint(code, canvas: canvas, rotation: .none, into: $0, stride: canvas.width)
                }
            })
        let side = saved.rect.width
        #expect(saved.rect.height == side && side <= 320 * 2 / 3 && side >= 320 / 2)
        let scale = side / (code.width + 2 * QRCodePainter.quietModules)
        let origin = (x: saved.rect.x, y: saved.rect.y)
        // The quiet zone is white, the finder's corner module black, the photo outside untouched.
        #expect(pixels[origin.y * canvas.width + origin.x] == 0xFFFF_FFFF)
        let finder = (origin.y + 4 * scale) * canvas.width + origin.x + 4 * scale
        #expect(pixels[finder] == 0xFF00_0000)
        #expect(pixels[0] == 0xFF80_8080)
        pixels.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { saved.restore(into: base, stride: canvas.width) }
        }
        #expect(pixels.allSatisfy { $0 == 0xFF80_8080 })
    }
}
