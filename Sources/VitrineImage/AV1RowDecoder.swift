import CDav1d
import VitrineCore
import VitrinePlatform

/// An AVIF still decoded by dav1d straight from the item's data: the picture is held once, as dav1d's Y'CbCr
/// planes, and each row is converted to BGRX as it is asked for, cropped as the clean aperture says. The
/// conversion is libheif's (which pillow-heif, the reference, and most viewers use): the nclx box's matrix and
/// range, else the bitstream's; chroma from the sample covering the pixel; single-precision arithmetic rounded
/// half up.
final class AV1RowDecoder: RowDecoder {
    let outputSize: Size
    var rowBatch: Int { 16 }
    var warning: String? { nil }
    let colorProfile: ColorProfile?
    private var picture = Dav1dPicture()
    private let still: HEIFStill
    private let conversion: YCbCrConversion
    private let bits: Int
    private let layout: Dav1dPixelLayout
    private var row = 0

    /// dav1d's own threads for one picture: its tiles and rows in parallel, as libheif lets it.
    static let threads: Int32 = 2

    init(file: borrowing PhotoFile, header: HEIFHeader, still: HEIFStill, isCancelled: (() -> Bool)?)
        throws(ImageError)
    {
        func failed(_ message: String) -> ImageError { ImageError(file: file.path, reason: .decodeFailed(message)) }
        self.still = still
        colorProfile = header.colorProfile
        if isCancelled?() == true { throw ImageError(file: file.path, reason: .cancelled) }
        do {
            try LazyLibrary.dav1d.load()
        } catch {
            throw failed("\(error)")
        }
        var data = Dav1dData()
        guard let buffer = vitrine_av1_data(&data, still.codedBytes) else { throw failed("dav1d: out of memory") }
        var filled = 0
        for extent in still.extents {
            let target = UnsafeMutableRawBufferPointer(start: buffer + filled, count: extent.count)
            let read: Int
            do {
                read = try file.readFully(into: target, offset: extent.lowerBound)
            } catch {
                dav1d_data_unref(&data)
                throw error
            }
            guard read == extent.count else {
                dav1d_data_unref(&data)
                throw ImageError(
                    file: file.path, reason: .damaged(.avif, "the file ends inside the image data (truncated)"))
            }
            filled += read
        }
        let limit = UInt32(clamping: still.size.pixelCount)
        let status = vitrine_av1_decode(&data, Self.threads, limit, &picture)
        guard status == 0 else { throw failed("dav1d: \(String(cString: strerror(-status)))") }
        let (width, height) = (Int(picture.p.w), Int(picture.p.h))
        guard let sequence = picture.seq_hdr, picture.data.0 != nil,
            width >= still.crop.x + still.crop.width, height >= still.crop.y + still.crop.height
        else {
            dav1d_picture_unref(&picture)
            throw failed("dav1d decoded a \(width)x\(height) picture for a \(still.size) image")
        }
        bits = Int(picture.p.bpc)
        layout = picture.p.layout
        conversion = YCbCrConversion(
            matrix: still.matrix ?? Int(sequence.pointee.mtrx.rawValue),
            fullRange: still.fullRange ?? (sequence.pointee.color_range != 0), bits: bits)
        outputSize = still.crop.size
        if isCancelled?() == true {
            dav1d_picture_unref(&picture)
            throw ImageError(file: file.path, reason: .cancelled)
        }
    }

    deinit { dav1d_picture_unref(&picture) }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        var count = 0
        let sampleBytes = bits > 8 ? 2 : 1
        let (lumaStride, chromaStride) = (Int(picture.stride.0), Int(picture.stride.1))
        let monochrome = layout == DAV1D_PIXEL_LAYOUT_I400
        let shiftX = layout == DAV1D_PIXEL_LAYOUT_I420 || layout == DAV1D_PIXEL_LAYOUT_I422 ? 1 : 0
        let shiftY = layout == DAV1D_PIXEL_LAYOUT_I420 ? 1 : 0
        for destination in rows where row < outputSize.height {
            let y = still.crop.y + row
            guard let luma = picture.data.0 else { return .failure(RowDecodeFailure(message: "no picture")) }
            let lumaRow = UnsafeRawPointer(luma) + y * lumaStride
            let chromaOffset = (y >> shiftY) * chromaStride
            let blue = monochrome ? nil : picture.data.1.map { UnsafeRawPointer($0) + chromaOffset }
            let red = monochrome ? nil : picture.data.2.map { UnsafeRawPointer($0) + chromaOffset }
            conversion.convert(
                luma: lumaRow, blue: blue, red: red, sampleBytes: sampleBytes, shift: shiftX,
                first: still.crop.x, count: outputSize.width, into: destination)
            row += 1
            count += 1
        }
        return .success(count)
    }

    func finish() -> String? { nil }
}

/// libheif's Y'CbCr to RGB (`Op_YCbCr_to_RGB`), which pillow-heif shows: the coefficients of the nclx matrix
/// (BT.601's for any it does not know), limited range expanded by 1.1689 and 1.1429, each value rounded half up.
/// Samples of more than 8 bits are converted at their depth and then scaled to 8.
struct YCbCrConversion {
    let redFromCr: Float
    let greenFromCb: Float
    let greenFromCr: Float
    let blueFromCb: Float
    let limited: Bool
    /// Matrix 0: the planes are G, B and R.
    let identity: Bool
    let bits: Int

    init(matrix: Int, fullRange: Bool, bits: Int) {
        let weights: (red: Float, blue: Float)?
        switch matrix {
        case 1: weights = (0.2126, 0.0722)
        case 4: weights = (0.30, 0.11)
        case 5, 6: weights = (0.299, 0.114)
        case 7: weights = (0.212, 0.087)
        case 9, 10: weights = (0.2627, 0.0593)
        default: weights = nil
        }
        if let (red, blue) = weights {
            let green = 1 - red - blue
            redFromCr = 2 * (1 - red)
            greenFromCb = -2 * blue * (1 - blue) / green
            greenFromCr = -2 * red * (1 - red) / green
            blueFromCb = 2 * (1 - blue)
        } else {
            (redFromCr, greenFromCb, greenFromCr, blueFromCb) = (1.402, -0.344136, -0.714136, 1.772)
        }
        limited = !fullRange
        identity = matrix == 0
        self.bits = bits
    }

    /// Converts `count` pixels of a row from column `first`. `blue` and `red` hold one sample per `1 << shift`
    /// pixels across (nil: monochrome).
    func convert(
        luma: UnsafeRawPointer, blue: UnsafeRawPointer?, red: UnsafeRawPointer?, sampleBytes: Int, shift: Int,
        first: Int, count: Int, into output: UnsafeMutablePointer<UInt8>
    ) {
        let depthShift = max(0, bits - 8)
        let half = Float(1 << (bits - 1))
        let blackLevel = Float(16 << depthShift)
        let largest = Float((1 << bits) - 1)
        let scale = 1 / Float(1 << depthShift)
        @inline(__always) func sample(_ plane: UnsafeRawPointer, _ index: Int) -> Float {
            sampleBytes == 1
                ? Float(plane.load(fromByteOffset: index, as: UInt8.self))
                : Float(plane.load(fromByteOffset: index * 2, as: UInt16.self))
        }
        @inline(__always) func eight(_ value: Float) -> UInt8 {
            let rounded = (min(max(value, 0), largest) + 0.5).rounded(.down)
            return UInt8(truncatingIfNeeded: Int(depthShift == 0 ? rounded : (rounded * scale + 0.5).rounded(.down)))
        }
        for index in 0..<count {
            let x = first + index
            var y = sample(luma, x)
            let pixel = output + index * 4
            pixel[3] = 255
            guard let blue, let red else {
                if limited { y = (y - blackLevel) * 1.1689 }
                let gray = eight(y)
                (pixel[0], pixel[1], pixel[2]) = (gray, gray, gray)
                continue
            }
            var cb = sample(blue, x >> shift)
            var cr = sample(red, x >> shift)
            if identity {
                (pixel[0], pixel[1], pixel[2]) = (eight(cb), eight(y), eight(cr))
                continue
            }
            cb -= half
            cr -= half
            if limited {
                y = (y - blackLevel) * 1.1689
                cb *= 1.1429
                cr *= 1.1429
            }
            pixel[0] = eight(y + blueFromCb * cb)
            pixel[1] = eight(y + greenFromCb * cb + greenFromCr * cr)
            pixel[2] = eight(y + redFromCr * cr)
        }
    }
}
