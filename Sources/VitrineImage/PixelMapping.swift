import VitrineCore

/// Where each pixel of a stored-orientation image lands in a scanout frame, as `base + x * stepX + y * stepY`.
///
/// EXIF orientation, the placement offset on the canvas and the panel rotation are all flips, transposes and
/// shifts, so together they stay one integer affine map; writing through it costs nothing extra per pixel, and
/// no rotated copy of the picture is ever made.
public struct PixelMapping: Equatable, Sendable {
    public var base: Int
    public var stepX: Int
    public var stepY: Int

    /// A 2x2 integer matrix with a translation: `(x', y') = (m00 x + m01 y + tx, m10 x + m11 y + ty)`.
    struct Affine: Equatable {
        var m00 = 1, m01 = 0, m10 = 0, m11 = 1
        var tx = 0, ty = 0

        /// The map an orientation applies to an image of `size` (stored), landing in its displayed size.
        init(_ orientation: Orientation, size: Size) {
            let mapping = orientation.mapping
            let out = orientation.displayedSize(ofStored: size)
            if mapping.transpose { (m00, m01, m10, m11) = (0, 1, 1, 0) }
            if mapping.mirrorX { (m00, m01, tx) = (-m00, -m01, out.width - 1) }
            if mapping.mirrorY { (m10, m11, ty) = (-m10, -m11, out.height - 1) }
        }

        init(translationX: Int, y: Int) {
            tx = translationX
            ty = y
        }

        /// `self` applied after `first`.
        func after(_ first: Affine) -> Affine {
            var result = Affine(translationX: 0, y: 0)
            result.m00 = m00 * first.m00 + m01 * first.m10
            result.m01 = m00 * first.m01 + m01 * first.m11
            result.m10 = m10 * first.m00 + m11 * first.m10
            result.m11 = m10 * first.m01 + m11 * first.m11
            result.tx = m00 * first.tx + m01 * first.ty + tx
            result.ty = m10 * first.tx + m11 * first.ty + ty
            return result
        }

        func apply(_ x: Int, _ y: Int) -> (x: Int, y: Int) { (m00 * x + m01 * y + tx, m10 * x + m11 * y + ty) }
    }

    /// The mapping for an image of `storedSize` with `orientation`, placed upright at `destination` on a canvas of
    /// `canvas`, which is then turned by `rotation` into the scanout frame.
    public init(
        storedSize: Size, orientation: Orientation, destination: Placement.Rect, canvas: Size, rotation: Rotation
    ) {
        let upright = Affine(orientation, size: storedSize)
        let placed = Affine(translationX: destination.x, y: destination.y).after(upright)
        let total = Affine(rotation.asOrientation, size: canvas).after(placed)
        let stride = rotation.scanoutSize(forCompose: canvas).width
        base = total.tx + total.ty * stride
        stepX = total.m00 + total.m10 * stride
        stepY = total.m01 + total.m11 * stride
    }

    /// The scanout rectangle a canvas rectangle covers after the panel rotation.
    public static func scanoutRect(of rect: Placement.Rect, canvas: Size, rotation: Rotation) -> Placement.Rect {
        let turn = Affine(rotation.asOrientation, size: canvas)
        let a = turn.apply(rect.x, rect.y)
        let b = turn.apply(rect.x + rect.width - 1, rect.y + rect.height - 1)
        return Placement.Rect(
            x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x) + 1, height: abs(a.y - b.y) + 1)
    }
}
