import Dispatch
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Separable resampling of a BGRX image window to an exact size, written straight into a frame through a
/// `PixelMapping` (so orientation and panel rotation cost no extra pass or buffer).
///
/// The four channels of a pixel travel in one SIMD register. Memory beyond the source and the frame is a ring of
/// float rows as tall as the filter, per band.
public struct Resampler {
    /// Filter taps for one axis: output `i` reads `count[i]` source pixels from `start[i]` with `weights`.
    struct Axis {
        var start: [Int]
        var count: [Int]
        var taps: Int
        var weights: [Float]

        /// Pillow's coefficient layout (`precompute_coeffs`), so results line up with the usual reference.
        init(sourceLength: Int, windowStart: Double, windowLength: Double, outputLength: Int, filter: ResamplingFilter)
        {
            let scale = windowLength / Double(outputLength)
            let filterScale = max(scale, 1)
            let support = filter.support * filterScale
            taps = Int(support.rounded(.up)) * 2 + 1
            start = []
            count = []
            start.reserveCapacity(outputLength)
            count.reserveCapacity(outputLength)
            weights = [Float](repeating: 0, count: outputLength * taps)
            for index in 0..<outputLength {
                let center = windowStart + (Double(index) + 0.5) * scale
                let first = max(0, Int((center - support + 0.5).rounded(.down)))
                let end = min(sourceLength, Int((center + support + 0.5).rounded(.down)))
                var span = max(1, end - first)
                let origin = min(first, sourceLength - 1)
                span = min(span, sourceLength - origin)
                var values = [Double](repeating: 0, count: span)
                var total = 0.0
                for offset in 0..<span {
                    let value = filter.weight((Double(origin + offset) - center + 0.5) / filterScale)
                    values[offset] = value
                    total += value
                }
                if total == 0 {
                    values = [Double](repeating: 0, count: span)
                    values[span / 2] = 1
                    total = 1
                }
                for offset in 0..<min(span, taps) { weights[index * taps + offset] = Float(values[offset] / total) }
                start.append(origin)
                count.append(min(span, taps))
            }
        }
    }

    public var filter: ResamplingFilter
    /// Output rows are split into this many bands resampled on separate threads (the decode worker waits).
    public var threads: Int

    public init(filter: ResamplingFilter = .cubic, threads: Int = Resampler.defaultThreads) {
        self.filter = filter
        self.threads = max(1, threads)
    }

    /// The online processors, at most four: beyond that the bands are too thin to pay for their threads.
    public static let defaultThreads = max(1, min(4, sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// Resamples `window` of `source` (BGRX, `sourceSize`, rows packed) to `outputSize` pixels and stores pixel
    /// (x, y) of the result at `destination[mapping.base + x * mapping.stepX + y * mapping.stepY]`.
    public func resample(
        source: UnsafePointer<UInt8>, sourceSize: Size, window: Placement.Window, outputSize: Size,
        destination: UnsafeMutablePointer<UInt32>, mapping: PixelMapping
    ) {
        let horizontal = Axis(
            sourceLength: sourceSize.width, windowStart: window.x, windowLength: window.width,
            outputLength: outputSize.width, filter: filter)
        let vertical = Axis(
            sourceLength: sourceSize.height, windowStart: window.y, windowLength: window.height,
            outputLength: outputSize.height, filter: filter)
        // Small frames are not worth a thread; below this the bands would cost more than they save.
        let bands = outputSize.pixelCount >= 1 << 18 ? min(threads, outputSize.height) : 1
        let job = Job(
            source: source, sourceSize: sourceSize, outputSize: outputSize, destination: destination,
            mapping: mapping, horizontal: horizontal, vertical: vertical)
        if bands == 1 {
            job.run(rows: 0..<outputSize.height)
        } else {
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                job.run(rows: band * outputSize.height / bands..<(band + 1) * outputSize.height / bands)
            }
        }
    }

    /// One resampling, shared read-only by the bands; each band writes only its own output rows.
    struct Job: @unchecked Sendable {
        // @unchecked: the pointers are read-only here except `destination`, where bands write disjoint rows.
        let source: UnsafePointer<UInt8>
        let sourceSize: Size
        let outputSize: Size
        let destination: UnsafeMutablePointer<UInt32>
        let mapping: PixelMapping
        let horizontal: Axis
        let vertical: Axis

        /// Horizontal pass first, once per source row, into a ring of float rows as tall as the vertical filter;
        /// then each output row is a weighted sum of ring rows. Source rows are converted to float once, not once
        /// per output row that reads them.
        func run(rows: Range<Int>) {
            guard !rows.isEmpty else { return }
            let width = outputSize.width
            let spanStart = horizontal.start.min() ?? 0
            let spanEnd = zip(horizontal.start, horizontal.count).map { $0 + $1 }.max() ?? 0
            let span = spanEnd - spanStart
            let ringSize = vertical.taps
            let converted = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: span)
            let ring = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: ringSize * width)
            let sum = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: width)
            defer {
                converted.deallocate()
                ring.deallocate()
                sum.deallocate()
            }
            let sourceRowBytes = sourceSize.width * 4
            var nextSourceRow = vertical.start[rows.lowerBound]
            // Raw pointers for every table the loops read: array accesses there cost bounds checks and retains.
            let horizontalStarts = UnsafeMutablePointer<Int>.allocate(capacity: width)
            let horizontalCounts = UnsafeMutablePointer<Int>.allocate(capacity: width)
            defer {
                horizontalStarts.deallocate()
                horizontalCounts.deallocate()
            }
            for x in 0..<width {
                horizontalStarts[x] = horizontal.start[x] - spanStart
                horizontalCounts[x] = horizontal.count[x]
            }
            let horizontalTaps = horizontal.taps
            horizontal.weights.withUnsafeBufferPointer { horizontalWeights in
                vertical.weights.withUnsafeBufferPointer { verticalWeights in
                    guard let horizontalWeights = horizontalWeights.baseAddress,
                        let verticalWeights = verticalWeights.baseAddress
                    else { return }
                    for y in rows {
                        let first = vertical.start[y]
                        let end = first + vertical.count[y]
                        nextSourceRow = max(nextSourceRow, first)
                        while nextSourceRow < end {
                            let bytes = source + nextSourceRow * sourceRowBytes + spanStart * 4
                            converted.withMemoryRebound(to: Float.self, capacity: span * 4) { floats in
                                for index in 0..<span * 4 { floats[index] = Float(bytes[index]) }
                            }
                            let out = ring + (nextSourceRow % ringSize) * width
                            var weights = horizontalWeights
                            for x in 0..<width {
                                let pixels = converted + horizontalStarts[x]
                                var total = weights[0] * pixels[0]
                                var tap = 1
                                let count = horizontalCounts[x]
                                while tap < count {
                                    total += weights[tap] * pixels[tap]
                                    tap += 1
                                }
                                out[x] = total
                                weights += horizontalTaps
                            }
                            nextSourceRow += 1
                        }
                        let weights = verticalWeights + y * vertical.taps
                        let firstRow = ring + (first % ringSize) * width
                        let weight = weights[0]
                        for x in 0..<width { sum[x] = weight * firstRow[x] }
                        for tap in 1..<vertical.count[y] {
                            let row = ring + ((first + tap) % ringSize) * width
                            let weight = weights[tap]
                            for x in 0..<width { sum[x] += weight * row[x] }
                        }
                        var target = mapping.base + y * mapping.stepY
                        let low = SIMD4<Float>(repeating: 0)
                        let high = SIMD4<Float>(repeating: 255)
                        // Adding 1.5 * 2^23 leaves round-to-nearest(value) in the low mantissa bits: a float to
                        // integer conversion without the range checks Swift's converting initialisers carry.
                        let magic = SIMD4<Float>(repeating: 12_582_912)
                        let shifts = SIMD4<UInt32>(0, 8, 16, 0)
                        let byteMask = SIMD4<UInt32>(0xFF, 0xFF, 0xFF, 0)
                        for x in 0..<width {
                            let rounded = pointwiseMin(pointwiseMax(sum[x], low), high) + magic
                            let channels = (unsafeBitCast(rounded, to: SIMD4<UInt32>.self) & byteMask) &<< shifts
                            destination[target] = channels.x | channels.y | channels.z
                            target += mapping.stepX
                        }
                    }
                }
            }
        }
    }
}
