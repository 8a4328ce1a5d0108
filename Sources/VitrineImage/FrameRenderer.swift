import VitrineCore

/// Turns a JPEG file into a panel frame: header, DCT-scaled decode, orientation, resampling and placement, with
/// every buffer charged to the memory budget before it is allocated. One renderer per thread.
public final class FrameRenderer {
    public let budget: MemoryBudget
    private let decompressor = TurboJPEGDecompressor()

    /// Seconds the last render spent reading and decoding, and resampling and composing (for `vitrine bench`).
    public private(set) var lastTimings: (decode: Double, compose: Double) = (0, 0)

    public init(budget: MemoryBudget) {
        self.budget = budget
    }

    /// The header alone: size, orientation, format. Reads only marker segments.
    public func header(of path: String) throws(ImageError) -> JPEGHeader {
        try PhotoFile(path: path).header()
    }

    /// The plan for a photo, after the checks that need no decoding (format, pixel cap).
    public func plan(for path: String, options: RenderOptions) throws(ImageError) -> DecodePlan {
        let file = try PhotoFile(path: path)
        return try plan(file: file, options: options)
    }

    private func plan(file: borrowing PhotoFile, options: RenderOptions) throws(ImageError) -> DecodePlan {
        let header = try file.header()
        guard Double(header.size.pixelCount) <= options.maxMegapixels * 1_000_000 else {
            throw ImageError(file: file.path, reason: .tooManyPixels(header.size, limitMegapixels: options.maxMegapixels))
        }
        return DecodePlan.make(header: header, fileBytes: file.byteCount, options: options)
    }

    /// Renders a photo into a new frame of the scanout size. Nothing is allocated before the pixel cap and the
    /// budget have accepted the photo.
    public func render(_ path: String, options: RenderOptions) throws(ImageError) -> (frame: Frame, plan: DecodePlan) {
        let file = try PhotoFile(path: path)
        let plan = try plan(file: file, options: options)
        let scanout = options.rotation.scanoutSize(forCompose: options.canvas)
        let budget = self.budget
        let decodePurpose =
            "decoding \(plan.header.size) at \(plan.scaleDescription) (file \(MemoryBudget.format(plan.fileBytes)), "
            + "\(plan.decodedSize) pixels \(MemoryBudget.format(plan.decodedBytes)), decoder "
            + "\(MemoryBudget.format(plan.decoderWorkspaceBytes)))"
        func overBudget(_ error: MemoryBudget.Exceeded) -> ImageError {
            ImageError(file: path, reason: .overBudget(error))
        }
        let decodeCharge: MemoryBudget.Charge
        do { decodeCharge = try budget.charge(plan.decodeBytes, for: decodePurpose) } catch { throw overBudget(error) }
        let frame: Frame
        do { frame = try Frame(size: scanout, budget: budget, purpose: "a \(scanout) frame") } catch {
            throw overBudget(error)
        }
        try decodeAndCompose(file: file, plan: plan, options: options, into: frame)
        // The decode's buffers are gone now; its charge is returned here, not before.
        _ = decodeCharge.bytes
        return (frame, plan)
    }

    private func decodeAndCompose(
        file: borrowing PhotoFile, plan: DecodePlan, options: RenderOptions, into frame: Frame
    ) throws(ImageError) {
        let started = MonotonicClock.seconds()
        let decoded = UnsafeMutablePointer<UInt8>.allocate(capacity: plan.decodedBytes)
        defer { decoded.deallocate() }
        do {
            let jpeg = UnsafeMutableRawBufferPointer.allocate(byteCount: plan.fileBytes, alignment: 16)
            defer { jpeg.deallocate() }
            let length = try file.readFully(into: jpeg, offset: 0)
            let layout: TurboJPEGDecompressor.PixelLayout =
                plan.header.colorModel == .cmyk || plan.header.colorModel == .ycck ? .cmyk : .bgrx
            if let message = decompressor.decode(
                UnsafeRawBufferPointer(rebasing: jpeg[0..<length]), scaledSize: plan.decodedSize, layout: layout,
                into: decoded)
            {
                throw ImageError(file: file.path, reason: .decodeFailed(message))
            }
            if layout == .cmyk {
                ColorConversion.cmykToBGRX(
                    decoded, pixelCount: plan.decodedSize.pixelCount, inverted: plan.header.adobeTransform != nil)
            }
        }
        let decodedAt = MonotonicClock.seconds()
        let destination = plan.placement.destination
        let scanoutRect = PixelMapping.scanoutRect(of: destination, canvas: options.canvas, rotation: options.rotation)
        fillOutside(scanoutRect, of: frame, with: options.background)
        let mapping = PixelMapping(
            storedSize: plan.outputSize, orientation: plan.header.orientation, destination: destination,
            canvas: options.canvas, rotation: options.rotation)
        Resampler(filter: options.filter).resample(
            source: decoded, sourceSize: plan.decodedSize, window: plan.decodedWindow, outputSize: plan.outputSize,
            destination: frame.pixels, mapping: mapping)
        lastTimings = (decodedAt - started, MonotonicClock.seconds() - decodedAt)
    }

    /// Paints the letterbox: everything of the frame outside the picture's rectangle.
    private func fillOutside(_ rect: Placement.Rect, of frame: Frame, with color: RGBColor) {
        let size = frame.size
        frame.fill(color, x: 0, y: 0, width: size.width, height: rect.y)
        frame.fill(color, x: 0, y: rect.y + rect.height, width: size.width, height: size.height - rect.y - rect.height)
        frame.fill(color, x: 0, y: rect.y, width: rect.x, height: rect.height)
        frame.fill(color, x: rect.x + rect.width, y: rect.y, width: size.width - rect.x - rect.width, height: rect.height)
    }
}
