/// Where a photo lands on the canvas: which part of the (upright) photo is shown and the rectangle it fills.
public struct Placement: Equatable, Sendable {
    public struct Window: Equatable, Sendable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double

        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    public struct Rect: Equatable, Sendable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        public var size: Size { Size(width: width, height: height) }
    }

    /// The shown part of the upright photo, in its pixels: all of it for `contain`, a centred crop for `cover`.
    public var window: Window
    /// The canvas rectangle the window is scaled into.
    public var destination: Rect

    /// `contain` keeps the aspect ratio and centres the photo (the rounding puts odd pixels of margin at the
    /// right and bottom); `cover` fills the canvas and crops evenly.
    public static func compute(photo: Size, canvas: Size, fit: Fit) -> Placement {
        let photoWidth = Double(photo.width)
        let photoHeight = Double(photo.height)
        switch fit.placement {
        case .contain, .containBlur:
            var width = canvas.width
            var height = canvas.height
            // Compare cross products in integers so equal aspect ratios never round to a one-pixel margin.
            if photo.width * canvas.height >= photo.height * canvas.width {
                height = min(canvas.height, max(1, Int((photoHeight * Double(canvas.width) / photoWidth).rounded())))
            } else {
                width = min(canvas.width, max(1, Int((photoWidth * Double(canvas.height) / photoHeight).rounded())))
            }
            return Placement(
                window: Window(x: 0, y: 0, width: photoWidth, height: photoHeight),
                destination: Rect(
                    x: (canvas.width - width) / 2, y: (canvas.height - height) / 2, width: width, height: height))
        case .cover:
            let scale = max(Double(canvas.width) / photoWidth, Double(canvas.height) / photoHeight)
            let shownWidth = min(photoWidth, Double(canvas.width) / scale)
            let shownHeight = min(photoHeight, Double(canvas.height) / scale)
            return Placement(
                window: Window(
                    x: (photoWidth - shownWidth) / 2, y: (photoHeight - shownHeight) / 2, width: shownWidth,
                    height: shownHeight),
                destination: Rect(x: 0, y: 0, width: canvas.width, height: canvas.height))
        }
    }

    /// How much the photo is enlarged (above 1) or reduced (below 1) on its way to the canvas.
    public var scale: Double { Double(destination.width) / window.width }
}
