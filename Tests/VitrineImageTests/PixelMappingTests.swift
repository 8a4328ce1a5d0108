import Testing
import VitrineCore

@testable import VitrineImage

@Suite struct PixelMappingTests {
    /// Where stored pixel (x, y) of a 3x2 image lands on a 3x2 (or 2x3) canvas.
    func land(_ orientation: Orientation, x: Int, y: Int) -> (Int, Int) {
        let stored = Size(width: 3, height: 2)
        let canvas = orientation.displayedSize(ofStored: stored)
        let mapping = PixelMapping(
            storedSize: stored, orientation: orientation,
            destination: Placement.Rect(x: 0, y: 0, width: canvas.width, height: canvas.height), canvas: canvas,
            rotation: .none)
        let index = mapping.base + x * mapping.stepX + y * mapping.stepY
        return (index % canvas.width, index / canvas.width)
    }

    @Test func storedTopLeftLandsWhereEXIFSays() {
        #expect(land(.up, x: 0, y: 0) == (0, 0))
        #expect(land(.mirrored, x: 0, y: 0) == (2, 0))
        #expect(land(.rotated180, x: 0, y: 0) == (2, 1))
        #expect(land(.flippedVertically, x: 0, y: 0) == (0, 1))
        #expect(land(.transposed, x: 0, y: 0) == (0, 0))
        #expect(land(.rotated90, x: 0, y: 0) == (1, 0))
        #expect(land(.transversed, x: 0, y: 0) == (1, 2))
        #expect(land(.rotated270, x: 0, y: 0) == (0, 2))
        #expect(land(.rotated90, x: 2, y: 0) == (1, 2))
    }

    @Test func panelRotationTurnsTheCanvasIntoTheScanout() {
        let canvas = Size(width: 4, height: 2)
        let rect = Placement.Rect(x: 1, y: 0, width: 2, height: 2)
        let mapping = PixelMapping(
            storedSize: Size(width: 2, height: 2), orientation: .up, destination: rect, canvas: canvas,
            rotation: .clockwise90)
        // Scanout is 2 wide, 4 tall; canvas (1, 0) turns clockwise to scanout (1, 1).
        #expect(mapping.base == 1 * 2 + 1)
        #expect(
            PixelMapping.scanoutRect(of: rect, canvas: canvas, rotation: .clockwise90)
                == Placement.Rect(x: 0, y: 1, width: 2, height: 2))
    }
}
