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

/// Clips another encoder wrote (Tests/Fixtures/clips, made by Tests/Tools/make_clip.py with ffmpeg's libx264,
/// libx265 and libvpx): each picture carries its number as ten black or white columns over a red bar, so what
/// was decoded is read off the pixels, not asked of the decoder.
@Suite struct ClipImageTests {
    static let fixtures = "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/") + "/Fixtures/clips"
    let budget = MemoryBudget(limit: 256 << 20)

    /// The number in a picture whose box is `box` of `frame`, as make_clip.py's `read_counter` reads it.
    static func counter(_ frame: Frame, box: Placement.Rect) -> Int {
        counter(pixel: { frame.pixel(x: $0, y: $1) }, box: box)
    }

    /// The same, `pixel(x, y)` giving a picture's XRGB pixel.
    static func counter(pixel: (Int, Int) -> UInt32, box: Placement.Rect) -> Int {
        var number = 0
        for bit in 0..<10 {
            let x = box.x + Int((Double(bit) + 0.5) * Double(box.width) / 10)
            let pixel = pixel(x, box.y + box.height * 3 / 8)
            let sum = Int(pixel >> 16 & 0xFF) + Int(pixel >> 8 & 0xFF) + Int(pixel & 0xFF)
            number = number * 2 + (sum > 3 * 128 ? 1 : 0)
        }
        return number
    }

    /// Until the stream rings, at most a second.
    static func wait(for wakeup: Wakeup) {
        var poller = pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&poller, 1, 1000)
    }

    func header(_ name: String) throws -> ImageHeader {
        try PhotoFile(path: "\(Self.fixtures)/\(name)").header()
    }

    @Test func anMP4IsToldByItsContentAndProbedByLibavformat() throws {
        let header = try header("counter.mp4")
        #expect(header.format == .clip)
        let clip = try #require(header.clip)
        #expect(clip.codec == "h264" && clip.container == "MP4")
        #expect(clip.size == Size(width: 160, height: 90))
        #expect(abs(clip.frameRate - 30) < 0.01)
        #expect(abs(clip.duration - 1) < 0.05)
        #expect(header.kind == "H.264 160x90 30 fps clip")
        let webm = try #require(try self.header("counter.webm").clip)
        #expect(webm.codec == "vp9" && webm.container == "Matroska")
    }

    @Test func aPhoneClipsDisplayMatrixTurnsItUpright() throws {
        // make_clip.py's `rotate=90` tag, which libavutil reports as a 90° counter-clockwise turn (as ffmpeg's own
        // autorotation turns it).
        let header = try header("rotated.mov")
        #expect(header.clip?.codec == "hevc")
        #expect(header.orientation == .rotated270)
        #expect(header.displayedSize == Size(width: 90, height: 160))
    }

    @Test func brokenClipsAreRefusedNamingTheFileAndWhatIsWrong() throws {
        let cases: [(String, String)] = [
            ("unknown_codec.mkv", "no decoder"),
            ("sound_only.mp4", "no video stream"),
            ("no_index.mp4", "clip"),
        ]
        for (name, words) in cases {
            #expect(throws: ImageError.self, "\(name)") { try header(name) }
            do {
                _ = try header(name)
            } catch {
                #expect("\(error)".contains(name), "\(error)")
                #expect("\(error)".contains(words), "\(error)")
            }
        }
    }

    @Test func theStillOfAClipIsItsFirstPictureInTheBoxAPhotoOfItsSizeGets() throws {
        let renderer = FrameRenderer(budget: budget)
        let options = RenderOptions(
            canvas: Size(width: 320, height: 240), background: RGBColor(red: 0, green: 0, blue: 90))
        let (frame, plan) = try renderer.render("\(Self.fixtures)/counter.mp4", options: options)
        // 160x90 fills the width: 320x180, letterboxed in the background colour.
        #expect(plan.placement.destination == Placement.Rect(x: 0, y: 30, width: 320, height: 180))
        #expect(frame.pixel(x: 160, y: 10) == RGBColor(red: 0, green: 0, blue: 90).xrgb)
        #expect(Self.counter(frame, box: plan.placement.destination) == 0)
        // The red bar under the columns.
        let red = frame.pixel(x: 160, y: 30 + 170)
        #expect(red >> 16 & 0xFF > 180 && red >> 8 & 0xFF < 70)
    }

    /// A stream of the clip at `path` in software, with the bell it rings.
    func stream(
        _ path: String, poster: Frame, options: RenderOptions, maxSeconds: Double? = nil, loop: Bool = false,
        budget: MemoryBudget? = nil
    ) throws -> (ClipStream, Wakeup) {
        let wakeup = try Wakeup()
        let stream = ClipStream(
            path: path, poster: poster,
            settings: ClipStream.Settings(options: options, decoding: .software, maxSeconds: maxSeconds, loop: loop),
            budget: budget ?? self.budget, wakeup: wakeup)
        return (stream, wakeup)
    }

    /// Hands each output of the stream to `done` as it comes, until `done` says so or 20 s have passed.
    static func read(_ stream: ClipStream, _ wakeup: Wakeup, until done: (ClipStream.Output) -> Bool) {
        let deadline = MonotonicClock.seconds() + 20
        while MonotonicClock.seconds() < deadline {
            wait(for: wakeup)
            wakeup.drain()
            for output in stream.take() where done(output) { return }
        }
    }

    /// Reads a stream's outputs until it ends, recycling each frame after noting its number.
    func play(_ name: String, canvas: Size, loop: Bool = false, maxSeconds: Double? = nil, limit: Int = 200)
        throws -> (numbers: [Int], times: [Double], ended: Bool, failure: ImageError?)
    {
        let path = "\(Self.fixtures)/\(name)"
        let options = RenderOptions(canvas: canvas)
        let (poster, plan) = try FrameRenderer(budget: budget).render(path, options: options)
        let (stream, wakeup) = try stream(path, poster: poster, options: options, maxSeconds: maxSeconds, loop: loop)
        var numbers: [Int] = []
        var times: [Double] = []
        var ended = false
        var failure: ImageError?
        Self.read(stream, wakeup) { output in
            switch output {
            case .picture(let picture):
                numbers.append(Self.counter(picture.frame, box: plan.placement.destination))
                times.append(picture.time)
                stream.recycle(picture.frame)
                return numbers.count >= limit
            case .ended:
                ended = true
                return true
            case .failed(let error):
                failure = error
                return true
            case .started, .soundPlays, .soundFailed:
                return false
            }
        }
        if !ended { stream.stop() }
        return (numbers, times, ended, failure)
    }

    @Test func everyPictureComesOnceInOrderWithItsTime() throws {
        let played = try play("counter.mp4", canvas: Size(width: 320, height: 240))
        #expect(played.ended)
        #expect(played.numbers == Array(0..<30))
        for (index, time) in played.times.enumerated() { #expect(abs(time - Double(index) / 30) < 0.001) }
        let webm = try play("counter.webm", canvas: Size(width: 64, height: 64))
        #expect(webm.numbers == Array(0..<10))
    }

    @Test func aTurnedClipIsDrawnUprightOnATurnedPanel() throws {
        // Portrait pictures on a portrait canvas, scanned out on a landscape panel turned 90°: both turns in one
        // mapping, as for a photo. The counter of the first picture is 0; the red bar must be at the picture's
        // bottom as ffmpeg's autorotation shows it (its right edge before the turn: Tests/Tools/make_clip.py).
        let path = "\(Self.fixtures)/rotated.mov"
        var options = RenderOptions(canvas: Size(width: 90, height: 160))
        options.rotation = .clockwise90
        let (poster, _) = try FrameRenderer(budget: budget).render(path, options: options)
        let (stream, wakeup) = try stream(path, poster: poster, options: options)
        defer { stream.stop() }
        var first: Frame?
        Self.read(stream, wakeup) { output in
            if case .picture(let picture) = output { first = picture.frame }
            return first != nil
        }
        let frame = try #require(first)
        // The picture as the poster shows it (the same mapping, the still decoded by the same scaler's filter).
        var differing = 0
        for index in 0..<frame.size.pixelCount
        where abs(Int(frame.pixels[index] >> 16 & 0xFF) - Int(poster.pixels[index] >> 16 & 0xFF)) > 40 {
            differing += 1
        }
        #expect(differing < frame.size.pixelCount / 50)
    }

    /// counter.mp4 played to its end with clip time 0 `start` seconds from now: the stream (for its counts), the
    /// pictures handed over and whether it ended.
    func playTimed(startingIn start: Double) throws -> (stream: ClipStream, shown: Int, ended: Bool) {
        let path = "\(Self.fixtures)/counter.mp4"
        let options = RenderOptions(canvas: Size(width: 64, height: 64))
        let (poster, _) = try FrameRenderer(budget: budget).render(path, options: options)
        let (stream, wakeup) = try stream(path, poster: poster, options: options)
        stream.setClock(anchor: MonotonicClock.seconds() + start)
        var shown = 0
        var ended = false
        Self.read(stream, wakeup) { output in
            if case .picture(let picture) = output {
                shown += 1
                stream.recycle(picture.frame)
            }
            if case .ended = output { ended = true }
            return ended
        }
        return (stream, shown, ended)
    }

    @Test func picturesAlreadyLateWhenDecodedArePassedOverUnscaled() throws {
        // The clip's time 0 was long ago: every picture is past its time as it is decoded. The first is shown (the
        // screen has waited), the rest are passed over within the quarter second the screen may wait.
        let (stream, shown, ended) = try playTimed(startingIn: -100)
        #expect(ended)
        #expect(shown >= 1 && shown + stream.skippedPictures == 30)
        #expect(stream.skippedPictures >= 20)
        // Far behind, the B-pictures nothing refers to (about half of libx264's) are not even decoded.
        #expect(stream.undecodedPictures >= 6)
        #expect(stream.undecodedPictures < stream.skippedPictures)
    }

    @Test func aDecoderThatKeepsUpDecodesEveryPicture() throws {
        // Clip time 0 is a minute away: every picture is decoded ahead of its time, none passed over.
        let (stream, shown, ended) = try playTimed(startingIn: 60)
        #expect(ended)
        #expect(shown == 30)
        #expect(stream.skippedPictures == 0)
    }

    @Test func aLoopingClipGoesOnPastItsEndWithItsTimeCountingOn() throws {
        let played = try play("counter.webm", canvas: Size(width: 64, height: 64), loop: true, limit: 25)
        #expect(played.numbers.prefix(25) == ArraySlice(Array(0..<10) + Array(0..<10) + Array(0..<5)))
        #expect(played.times.count >= 25)
        #expect(zip(played.times, played.times.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func maxSecondsEndsAClipEarly() throws {
        let played = try play("counter.mp4", canvas: Size(width: 64, height: 64), maxSeconds: 0.5)
        #expect(played.ended)
        #expect(played.numbers == Array(0..<15))
    }

    @Test func aTruncatedClipPlaysWhatItHasAndEnds() throws {
        let played = try play("truncated.mp4", canvas: Size(width: 64, height: 64))
        #expect(played.failure == nil)
        #expect(played.ended)
        #expect(!played.numbers.isEmpty && played.numbers.count < 30)
        #expect(played.numbers == Array(0..<played.numbers.count))
    }

    @Test func aClipThatDoesNotFitTheBudgetIsRefusedBeforeItsFirstPicture() throws {
        let small = MemoryBudget(limit: 150_000)
        let options = RenderOptions(canvas: Size(width: 64, height: 64))
        let poster = try Frame(size: Size(width: 64, height: 64), budget: budget, purpose: "poster")
        let (stream, wakeup) = try stream(
            "\(Self.fixtures)/counter.mp4", poster: poster, options: options, budget: small)
        var failure: ImageError?
        Self.read(stream, wakeup) { output in
            if case .failed(let error) = output { failure = error }
            return failure != nil
        }
        let error = try #require(failure)
        guard case .overBudget = error.reason else {
            Issue.record("refused for \(error)")
            return
        }
        #expect(small.used == 0)
    }
}
