import VitrineCore

/// Separable resampling of a BGRX image window to an exact size, written straight into a frame through a
/// `PixelMapping` (so orientation and panel rotation cost no extra pass or buffer).
///
/// The four channels of a pixel travel in one SIMD register. Memory beyond the frame is one converted source row
/// and a ring of filtered rows as tall as the vertical filter.
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
    public init(filter: ResamplingFilter = .cubic) {
        self.filter = filter
    }

    /// Bytes a resampling allocates besides its output: filter tables, one converted source row and the ring of
    /// filtered rows.
    public static func workspaceBytes(
        sourceWidth: Int, window: Placement.Window, outputSize: Size, filter: ResamplingFilter
    ) -> Int {
        let taps = { (scale: Double) in Int((filter.support * max(scale, 1)).rounded(.up)) * 2 + 1 }
        let horizontalTaps = taps(window.width / Double(outputSize.width))
        let verticalTaps = taps(window.height / Double(outputSize.height))
        let tables =
            (outputSize.width * horizontalTaps + outputSize.height * verticalTaps) * 4
            + (outputSize.width + outputSize.height) * 16
        return tables + sourceWidth * 16 + (verticalTaps + 1) * outputSize.width * 16
    }

    /// Prepares the resampling of `window` of a BGRX source of `sourceSize` to `outputSize` pixels, storing pixel
    /// (x, y) of the result at `destination[mapping.base + x * mapping.stepX + y * mapping.stepY]`. The fourth
    /// byte is resampled too and kept when `keepingAlpha` (premultiplied alpha), otherwise written as zero.
    public func job(
        sourceSize: Size, window: Placement.Window, outputSize: Size, destination: UnsafeMutablePointer<UInt32>,
        mapping: PixelMapping, keepingAlpha: Bool = false
    ) -> Job {
        Job(
            outputSize: outputSize, destination: destination, mapping: mapping, keepingAlpha: keepingAlpha,
            horizontal: Axis(
                sourceLength: sourceSize.width, windowStart: window.x, windowLength: window.width,
                outputLength: outputSize.width, filter: filter),
            vertical: Axis(
                sourceLength: sourceSize.height, windowStart: window.y, windowLength: window.height,
                outputLength: outputSize.height, filter: filter))
    }

    /// One resampling, run on the resampling thread while its creator decodes.
    public struct Job: @unchecked Sendable {
        // @unchecked: `destination` is the only pointer, and one thread runs the job while its creator waits.
        let outputSize: Size
        let destination: UnsafeMutablePointer<UInt32>
        let mapping: PixelMapping
        let keepingAlpha: Bool
        let horizontal: Axis
        let vertical: Axis

        /// Horizontal pass first, once per source row, into a ring of float rows as tall as the vertical filter;
        /// then each output row is a weighted sum of ring rows. Source rows are converted to float once, not once
        /// per output row that reads them.
        ///
        /// `sourceRow(r)` gives source row r, asked for in increasing order; nil stops the run (the decode failed),
        /// and the result is then false.
        public func run(rows: Range<Int>, sourceRow: (Int) -> UnsafePointer<UInt8>?) -> Bool {
            guard !rows.isEmpty else { return true }
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
            return horizontal.weights.withUnsafeBufferPointer { horizontalWeights in
                vertical.weights.withUnsafeBufferPointer { verticalWeights in
                    guard let horizontalWeights = horizontalWeights.baseAddress,
                        let verticalWeights = verticalWeights.baseAddress
                    else { return false }
                    for y in rows {
                        let first = vertical.start[y]
                        let end = first + vertical.count[y]
                        nextSourceRow = max(nextSourceRow, first)
                        while nextSourceRow < end {
                            guard let row = sourceRow(nextSourceRow) else { return false }
                            let bytes = row + spanStart * 4
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
                        let shifts = SIMD4<UInt32>(0, 8, 16, 24)
                        let byteMask = SIMD4<UInt32>(0xFF, 0xFF, 0xFF, keepingAlpha ? 0xFF : 0)
                        for x in 0..<width {
                            let rounded = pointwiseMin(pointwiseMax(sum[x], low), high) + magic
                            let channels = (unsafeBitCast(rounded, to: SIMD4<UInt32>.self) & byteMask) &<< shifts
                            destination[target] = channels.x | channels.y | channels.z | channels.w
                            target += mapping.stepX
                        }
                    }
                    return true
                }
            }
        }
    }
}
