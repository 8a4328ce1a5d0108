import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineImage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A clip's rendition (`ClipRenditionWriter`) read back by libavformat's demuxer and the player's own stream: H.264
/// at the size asked for, every picture in order (their numbers read off the pixels), a sideways phone clip still
/// shown as its original is, the sound copied.
@Suite struct ClipRenditionTests {
    let budget = MemoryBudget(limit: 256 << 20)

    /// Every picture of `path` as the player draws it on `canvas`, with the box it fills.
    func pictures(_ path: String, canvas: Size) throws -> (frames: [[UInt32]], box: Placement.Rect) {
        let options = RenderOptions(canvas: canvas)
        let (poster, plan) = try FrameRenderer(budget: budget).render(path, options: options)
        let wakeup = try Wakeup()
        let stream = ClipStream(
            path: path, poster: poster,
            settings: ClipStream.Settings(options: options, decoding: .software, maxSeconds: nil, loop: false),
            budget: budget, wakeup: wakeup)
        var frames: [[UInt32]] = []
        ClipImageTests.read(stream, wakeup) { output in
            switch output {
            case .picture(let picture):
                frames.append(Array(UnsafeBufferPointer(start: picture.frame.pixels, count: canvas.pixelCount)))
                stream.recycle(picture.frame)
                return false
            case .ended, .failed: return true
            case .started, .soundPlays, .soundFailed: return false
            }
        }
        return (frames, plan.placement.destination)
    }

    /// The mean difference of two pictures, in levels per channel.
    static func difference(_ a: [UInt32], _ b: [UInt32]) -> Double {
        var total = 0
        for (x, y) in zip(a, b) {
            for shift in [0, 8, 16] { total += abs(Int(x >> UInt32(shift) & 0xFF) - Int(y >> UInt32(shift) & 0xFF)) }
        }
        return Double(total) / Double(max(1, min(a.count, b.count) * 3))
    }

    @Test func aSidewaysHEVCPhoneClipBecomesH264ThatPlaysAsTheOriginalDoes() throws {
        let work = try TemporaryFolder()
        let original = "\(ClipImageTests.fixtures)/rotated.mov"
        let destination = "\(work.path)/rotated@90x160.mp4"
        let written = try ClipRenditionWriter.write(
            original: original, size: Size(width: 90, height: 160), to: destination)
        #expect(written.encoder == "libx264" && written.pictures == 10 && !written.sound)
        let header = try PhotoFile(path: destination).header()
        let clip = try #require(header.clip)
        #expect(clip.codec == "h264" && clip.container == "MP4" && clip.bitDepth == 8)
        // Stored sideways and turned by its matrix, as the original.
        #expect(clip.size == Size(width: 160, height: 90))
        #expect(header.displayedSize == Size(width: 90, height: 160))
        // Picture for picture what the original shows, give or take the second encoding.
        let canvas = Size(width: 90, height: 160)
        let copy = try pictures(destination, canvas: canvas)
        let source = try pictures(original, canvas: canvas)
        #expect(copy.frames.count == 10 && source.frames.count == 10, "\(copy.frames.count) and \(source.frames.count)")
        for (index, (a, b)) in zip(copy.frames, source.frames).enumerated() {
            #expect(Self.difference(a, b) < 4, "picture \(index): \(Self.difference(a, b))")
        }
        // No temporary file is left beside it.
        #expect(access(destination, F_OK) == 0)
        #expect(access("\(work.path)/.rotated@90x160.mp4.tmp", F_OK) != 0)
    }

    @Test func theSoundIsCopiedAndEveryPictureKeptInOrder() throws {
        let work = try TemporaryFolder()
        let destination = "\(work.path)/counter_sound@32x18.mp4"
        let written = try ClipRenditionWriter.write(
            original: ClipSoundTests.fixture, size: Size(width: 32, height: 18), to: destination)
        #expect(written.sound && written.pictures == 30 && written.passedOver == 0)
        let file = try ClipFile(path: destination)
        #expect(file.header.size == Size(width: 32, height: 18) && file.header.hasAudio)
        #expect(abs(file.header.duration - 1) < 0.1)
        let (frames, box) = try pictures(destination, canvas: Size(width: 320, height: 180))
        let numbers = frames.map { pixels in
            ClipImageTests.counter(pixel: { x, y in pixels[y * 320 + x] }, box: box)
        }
        #expect(numbers == Array(0..<30), "\(numbers)")
    }

    @Test func aClipThatCannotBeReadLeavesNoFile() throws {
        let work = try TemporaryFolder()
        #expect(throws: ImageError.self) {
            try ClipRenditionWriter.write(
                original: "\(ClipImageTests.fixtures)/unknown_codec.mkv", size: Size(width: 32, height: 18),
                to: "\(work.path)/x@32x18.mp4")
        }
        #expect(access("\(work.path)/x@32x18.mp4", F_OK) != 0 && access("\(work.path)/.x@32x18.mp4.tmp", F_OK) != 0)
    }
}
