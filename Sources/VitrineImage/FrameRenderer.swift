import VitrineCore
import VitrinePlatform

/// Turns a photo file (JPEG, PNG, WebP, HEIF or AVIF, told by its content) into a panel frame: header, a decode reduced
/// toward the panel where the format allows, orientation, resampling and placement, with every buffer charged to
/// the memory budget before it is allocated. One renderer per thread.
public final class FrameRenderer {
    public let budget: MemoryBudget
    /// What libjpeg warned about in photos it decoded whole, one line each naming the file, since `takeWarnings`.
    public private(set) var warnings: [String] = []
    /// Asked between batches of rows: true stops the decode there (`ImageError.cancelled`), so a slide no longer
    /// wanted, or a player that is stopping, does not wait for the whole photo.
    public var isCancelled: (() -> Bool)?
    /// Colour transforms by profile: a library's photos share a handful of profiles (sRGB, Display P3, Adobe RGB),
    /// and making a transform costs more than applying it to a photo. Nil remembers a profile that cannot be used.
    private var transforms: [ColorProfile: ColorTransform?] = [:]
    static let transformsKept = 8
    /// Each clip judged (`RenderOptions.clipDecoding`): its size and time, and its refusal if the board is too slow
    /// for it. A clip is timed the first time it comes round; after that its poster is decoded alone.
    private var clipVerdicts: [String: (byteCount: Int, modified: Int, refusal: ImageError?)] = [:]
    static let clipVerdictsKept = 1000
    public init(budget: MemoryBudget) {
        self.budget = budget
    }

    /// The warnings of the renders since the last call.
    public func takeWarnings() -> [String] {
        defer { warnings = [] }
        return warnings
    }

    /// The header alone: format, size, orientation. Reads only the metadata (a JPEG's marker segments, a PNG's
    /// chunks before its image data, a WebP's chunk headers).
    public func header(of path: String) throws(ImageError) -> ImageHeader {
        try PhotoFile(path: path).header()
    }

    /// The plan for a photo, after the checks that need no decoding (format, pixel cap). `known` is its header
    /// when the caller has just read it (to pick a rendition), so it is not read twice.
    private func plan(file: borrowing PhotoFile, options: RenderOptions, known: ImageHeader?) throws(ImageError)
        -> DecodePlan
    {
        let header: ImageHeader
        if let known {
            header = known
        } else {
            header = try file.header()
        }
        guard Double(header.size.pixelCount) <= options.maxMegapixels * 1_000_000 else {
            throw ImageError(
                file: file.path, reason: .tooManyPixels(header.size, limitMegapixels: options.maxMegapixels))
        }
        return DecodePlan.make(header: header, options: options)
    }

    /// Renders a photo into a new frame of the scanout size. Nothing is allocated before the pixel cap and the
    /// budget have accepted the photo. `header` skips reading the header again when the caller already has it.
    public func render(_ path: String, options: RenderOptions, header: ImageHeader? = nil) throws(ImageError)
        -> (frame: Frame, plan: DecodePlan)
    {
        let region = Placement.Rect(x: 0, y: 0, width: options.canvas.width, height: options.canvas.height)
        return try render(path, options: options, header: header, region: region) { () throws(ImageError) in
            try newFrame(options: options, for: path)
        }
    }

    /// Renders a photo into `region` (canvas pixels) of the frame `frame` gives, as the photo's own canvas (one
    /// half of a portrait pair); pixels outside the region are left as they are. `frame` is asked for only once
    /// the pixel cap and the budget have accepted the photo, so a first photo allocates nothing before that.
    public func render(
        _ path: String, options: RenderOptions, header: ImageHeader? = nil, region: Placement.Rect,
        frame: () throws(ImageError) -> Frame
    ) throws(ImageError) -> (frame: Frame, plan: DecodePlan) {
        let file = try PhotoFile(path: path)
        let plan = try plan(file: file, options: options, region: region, known: header)
        let decodeCharge = try chargeDecode(plan, options: options, region: region, path: path)
        let target = try frame()
        let shown = try compose(file: file, plan: plan, options: options, region: region, into: target)
        // The decode's buffers are gone now; its charge is returned here, not before.
        _ = decodeCharge.bytes
        return (target, shown)
    }

    /// A frame of the scanout size, charged to the budget; refused in the name of `path`, the photo it is for.
    public func newFrame(options: RenderOptions, for path: String) throws(ImageError) -> Frame {
        let scanout = options.rotation.scanoutSize(forCompose: options.canvas)
        do {
            return try Frame(size: scanout, budget: budget, purpose: "a \(scanout) frame")
        } catch {
            throw ImageError(file: path, reason: .overBudget(error))
        }
    }

    /// The plan for a photo placed in `region` of the canvas, after the checks that need no decoding.
    private func plan(file: borrowing PhotoFile, options: RenderOptions, region: Placement.Rect, known: ImageHeader?)
        throws(ImageError) -> DecodePlan
    {
        var regionOptions = options
        regionOptions.canvas = region.size
        var plan = try plan(file: file, options: regionOptions, known: known)
        plan.placement.destination.x += region.x
        plan.placement.destination.y += region.y
        return plan
    }

    private func chargeDecode(_ plan: DecodePlan, options: RenderOptions, region: Placement.Rect, path: String)
        throws(ImageError) -> MemoryBudget.Charge
    {
        let blurBytes = options.fit == .containBlur ? BlurFill.workspaceBytes(region: region) : 0
        let what =
            plan.header.clip != nil
            ? "the first picture of a \(plan.header.kind)"
            : "a \(plan.header.size) \(plan.header.kind) at \(plan.scaleDescription)"
        let purpose =
            "decoding \(what) (decoder "
            + "\(MemoryBudget.format(plan.decoderWorkspaceBytes)), "
            + "rows and resampling \(MemoryBudget.format(plan.rowBufferBytes + plan.resamplerBytes + blurBytes)))"
        do {
            return try budget.charge(plan.decodeBytes + blurBytes, for: purpose)
        } catch {
            throw ImageError(file: path, reason: .overBudget(error))
        }
    }

    /// Decodes, places the photo and paints the rest of its region: the background, or for `contain-blur` the
    /// blurred photo.
    /// Returns the plan followed: for a HEIF, the one for the size libheif delivered (see `replanned`).
    private func compose(
        file: borrowing PhotoFile, plan: DecodePlan, options: RenderOptions, region: Placement.Rect, into frame: Frame
    ) throws(ImageError) -> DecodePlan {
        var decoder = colorManaged(
            try startDecoder(file: file, plan: plan, judging: options.clipDecoding), plan: plan, file: file,
            options: options)
        // Over the blurred fill, transparent parts show the blur: they stay translucent until `BlurFill` composes.
        let translucent = plan.header.hasAlpha && options.fit == .containBlur
        if plan.header.hasAlpha {
            decoder = ConvertedRows(decoder, alphaOver: translucent ? nil : options.background)
        }
        let plan = try replanned(plan, for: decoder, file: file, options: options, region: region)
        let scanoutRegion = PixelMapping.scanoutRect(of: region, canvas: options.canvas, rotation: options.rotation)
        let scanoutPhoto = PixelMapping.scanoutRect(
            of: plan.placement.destination, canvas: options.canvas, rotation: options.rotation)
        if options.fit != .containBlur {
            fillOutside(scanoutPhoto, of: scanoutRegion, in: frame, with: options.background)
        }
        try decodeAndCompose(decoder, file: file, plan: plan, options: options, keepingAlpha: translucent, into: frame)
        if options.fit == .containBlur {
            BlurFill.fill(frame, region: scanoutRegion, photo: scanoutPhoto, translucent: translucent)
        }
        return plan
    }

    /// The plan again for the picture the decoder delivers when it is not the size the header said. libheif 1.15
    /// reports some rotated files (an `irot` on a grid, as Canon's HIF files have) at their stored size and then
    /// decodes them turned: what it decodes is what is shown. The budget was charged for the same pixels, so a
    /// picture no larger is placed anew; any other mismatch is an error.
    private func replanned(
        _ plan: DecodePlan, for decoder: any RowDecoder, file: borrowing PhotoFile, options: RenderOptions,
        region: Placement.Rect
    ) throws(ImageError) -> DecodePlan {
        if decoder.outputSize == plan.decodedSize { return plan }
        guard case .heif(var heif) = plan.header.details,
            decoder.outputSize.pixelCount <= plan.decodedSize.pixelCount
        else {
            throw ImageError(
                file: file.path,
                reason: .decodeFailed(
                    "decoder output \(decoder.outputSize) differs from the header's \(plan.decodedSize)"))
        }
        heif.size = decoder.outputSize
        return try self.plan(file: file, options: options, region: region, known: ImageHeader(heif))
    }

    /// Decodes on this thread and resamples on a second one, row by row through a small ring: the two overlap on
    /// two cores, and a JPEG or non-interlaced PNG is never held whole (a WebP is, at the size it was decoded to).
    private func decodeAndCompose(
        _ decoder: any RowDecoder, file: borrowing PhotoFile, plan: DecodePlan, options: RenderOptions,
        keepingAlpha: Bool, into frame: Frame
    ) throws(ImageError) {
        let destination = plan.placement.destination
        let mapping = PixelMapping(
            storedSize: plan.outputSize, orientation: plan.header.orientation, destination: destination,
            canvas: options.canvas, rotation: options.rotation)
        let job = Resampler(filter: options.filter).job(
            sourceSize: plan.decodedSize, window: plan.decodedWindow, outputSize: plan.outputSize,
            destination: frame.pixels, mapping: mapping, keepingAlpha: keepingAlpha)
        let rowBytes = plan.decodedSize.width * 4
        let pipe = RowPipe(rowBytes: rowBytes, capacity: DecodePlan.pipeRows)
        let outputRows = plan.outputSize.height
        let finisher = decoder.finisher
        let consumer = JoinableThread {
            var finishedBefore = 0
            _ = job.run(rows: 0..<outputRows) { wanted in
                guard let finisher else { return pipe.row(wanted) }
                // Each row finished once, in order, however often the filter asks for it.
                while finishedBefore <= wanted {
                    guard let row = pipe.row(finishedBefore) else { return nil }
                    finisher.finish(finishedBefore, UnsafeMutablePointer(mutating: row))
                    finishedBefore += 1
                }
                return pipe.row(wanted)
            }
            pipe.finishConsuming()
        }
        var failure: String?
        var row = 0
        let height = plan.decodedSize.height
        let batch = min(decoder.rowBatch, DecodePlan.pipeRows)
        var cancelled = false
        while row < height {
            if let isCancelled, isCancelled() {
                cancelled = true
                failure = "cancelled"
                break
            }
            let slots = pipe.slots(first: row, count: min(batch, height - row))
            switch decoder.read(into: slots) {
            case .failure(let error):
                failure = error.message
            case .success(let count):
                row += count
                pipe.publish(upTo: row)
                if count == 0 { failure = "the decoder stopped at row \(row) of \(height)" }
            }
            if failure != nil { break }
        }
        if failure == nil { failure = decoder.finish() }
        if failure != nil { pipe.fail() }
        consumer.join()
        if cancelled { throw ImageError(file: file.path, reason: .cancelled) }
        if let failure { throw ImageError(file: file.path, reason: .decodeFailed(failure)) }
        if let warning = decoder.warning {
            warnings.append("\(file.path): shown despite libjpeg's warning: \(warning)")
        }
    }

    /// The decoder with its rows converted to sRGB when the photo declares another colour space and colour
    /// management is on; otherwise the decoder itself.
    private func colorManaged(
        _ decoder: any RowDecoder, plan: DecodePlan, file: borrowing PhotoFile, options: RenderOptions
    ) -> any RowDecoder {
        guard options.colorManagement else { return decoder }
        var profile = decoder.colorProfile
        if profile == nil, let jpeg = plan.header.jpeg, !jpeg.iccChunks.isEmpty {
            var bytes: [UInt8] = []
            for chunk in jpeg.iccChunks where bytes.count + chunk.count <= 4 << 20 {
                bytes += (try? file.read(offset: chunk.lowerBound, count: chunk.count)) ?? []
            }
            profile = .icc(bytes)
        }
        guard let profile else { return decoder }
        let transform: ColorTransform?
        if let known = transforms[profile] {
            transform = known
        } else {
            if transforms.count >= Self.transformsKept { transforms.removeAll() }
            transform = ColorTransform(profile)
            transforms[profile] = transform
        }
        guard let transform, !transform.isIdentity else { return decoder }
        return ConvertedRows(decoder, transform: transform)
    }

    /// A clip's first picture; for the player's slide, the clip judged the first time it comes round.
    private func clipPoster(file: borrowing PhotoFile, size: Size, judging: VideoDecoding?) throws(ImageError)
        -> ClipPosterDecoder
    {
        let path = file.path
        guard let judging else { return try ClipPosterDecoder(path: path, outputSize: size) }
        let known = clipVerdicts[path].flatMap {
            $0.byteCount == file.byteCount && $0.modified == file.modified ? $0 : nil
        }
        if let refusal = known?.refusal { throw refusal }
        guard known == nil else { return try ClipPosterDecoder(path: path, outputSize: size) }
        let poster: ClipPosterDecoder
        do throws(ImageError) {
            poster = try ClipPosterDecoder(
                path: path, outputSize: size, judging: judging, isCancelled: isCancelled)
        } catch {
            if case .tooSlow = error.reason { remember(file, refusal: error) }
            throw error
        }
        remember(file, refusal: nil)
        return poster
    }

    private func remember(_ file: borrowing PhotoFile, refusal: ImageError?) {
        if clipVerdicts.count >= Self.clipVerdictsKept { clipVerdicts.removeAll() }
        clipVerdicts[file.path] = (file.byteCount, file.modified, refusal)
    }

    /// The format's decoder, started on the file at the plan's size.
    private func startDecoder(file: borrowing PhotoFile, plan: DecodePlan, judging: VideoDecoding?) throws(ImageError)
        -> any RowDecoder
    {
        if case .heif(let header) = plan.header.details {
            if let still = header.still {
                return try AV1RowDecoder(file: file, header: header, still: still, isCancelled: isCancelled)
            }
            if let grid = header.grid {
                return try HEIFGridDecoder(
                    file: file, header: header, grid: grid, reduction: 8 / plan.scaleNumerator,
                    isCancelled: isCancelled)
            }
            return try HEIFRowDecoder(file: file, header: header, isCancelled: isCancelled)
        }
        if case .clip = plan.header.details {
            return try clipPoster(file: file, size: plan.decodedSize, judging: judging)
        }
        do throws(RowDecodeFailure) {
            switch plan.header.details {
            case .jpeg(let header):
                let decompressor = JPEGDecompressor()
                if let message = decompressor.start(
                    descriptor: file.descriptor, scaleNumerator: plan.scaleNumerator, header: header)
                {
                    throw RowDecodeFailure(message: message)
                }
                return decompressor
            case .png(let header):
                return try PNGRowDecoder(descriptor: file.descriptor, header: header)
            case .webp(let header) where header.decodesRowByRow:
                return try LosslessWebPRowDecoder(file: file, header: header)
            case .webp(let header):
                return try WebPRowDecoder(file: file, header: header, outputSize: plan.decodedSize)
            case .heif:
                throw RowDecodeFailure(message: "HEIF is decoded by libheif")
            case .clip:
                throw RowDecodeFailure(message: "a clip is decoded by libavcodec")
            }
        } catch {
            throw ImageError(file: file.path, reason: .decodeFailed(error.message))
        }
    }

    /// Paints the letterbox: everything of `region` outside the picture's rectangle.
    private func fillOutside(
        _ rect: Placement.Rect, of region: Placement.Rect, in frame: Frame, with color: RGBColor
    ) {
        let right = region.x + region.width
        let bottom = region.y + region.height
        frame.fill(color, x: region.x, y: region.y, width: region.width, height: rect.y - region.y)
        frame.fill(
            color, x: region.x, y: rect.y + rect.height, width: region.width, height: bottom - rect.y - rect.height)
        frame.fill(color, x: region.x, y: rect.y, width: rect.x - region.x, height: rect.height)
        frame.fill(color, x: rect.x + rect.width, y: rect.y, width: right - rect.x - rect.width, height: rect.height)
    }
}
