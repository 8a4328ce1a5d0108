import Testing
import VitrineCore
import VitrineImage
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine renditions` on a library made here: what it writes, that the player then reads those files, and that
/// a second run writes nothing.
@Suite(.serialized) struct RenditionsCommandTests {
    let folder: TemporaryFolder
    let library: String

    init() throws {
        folder = try TemporaryFolder()
        library = "\(folder.path)/library"
        // Stored 1000x600 with red on the left and blue on the right, EXIF orientation 6: upright it is 600x1000
        // with red on top.
        let stored = Size(width: 1000, height: 600)
        var halves: [UInt8] = []
        for _ in 0..<stored.height {
            for x in 0..<stored.width {
                let color = x < stored.width / 2 ? JPEGFixture.red : JPEGFixture.blue
                halves += [color.red, color.green, color.blue]
            }
        }
        try folder.write(
            "library/Trips/tall.jpg",
            JPEGFixture.inserting(
                JPEGFixture.exifSegment(orientation: 6), into: try JPEGFixture.encode(rgb: halves, size: stored)))
        let wide = Size(width: 2400, height: 1440)
        try folder.write(
            "library/Trips/wide.JPG",
            try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.green, size: wide), size: wide))
        let small = Size(width: 200, height: 120)
        try folder.write(
            "library/small.jpg",
            try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.yellow, size: small), size: small))
        try folder.write("library/Trips/broken.jpg", Array("no jpeg here".utf8))
        try folder.write(
            "vitrine.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 0.2,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "800x480"},
                 "controlSocket": "control.sock"}
                """)
        try folder.write(
            "trips.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 0.2,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "800x480"},
                 "controlSocket": "control.sock", "startCategory": "Trips"}
                """)
    }

    func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
        RecordingConsole.run(arguments)
    }

    static func modified(_ path: String) -> Double? { RenditionsCommand.modificationTime(path) }

    @Test func writesWhatThePickerReadsLeavesOriginalsAloneAndIsIdempotent() throws {
        let originals = ["Trips/tall.jpg", "Trips/wide.JPG", "small.jpg", "Trips/broken.jpg"]
        let before = try originals.map { try FileBytes.read("\(library)/\($0)") }
        let arguments = [
            "renditions", "--config", "\(folder.path)/vitrine.json", "--profiles", "rpi-touch-display,hdmi-1080p",
            "--jobs", "2",
        ]
        let first = run(arguments)
        // The broken photo fails (exit 1, named); everything else is written.
        #expect(first.status == 1)
        #expect(first.errors.contains("failed \(library)/Trips/broken.jpg: not a photo Vitrine can show"))
        #expect(first.output.contains("renditions: 3 written, 0 up to date, 1 failed (4 originals in \(library)"))
        // 600x1000 upright: 288x480 on the 800x480 touch display, and nothing on 1080p, where it is no larger than
        // its box; 2400x1440 wide: 800x480 and 1800x1080; the small one needs none at all.
        let expected = ["Trips/tall@288x480.jpg", "Trips/wide@1800x1080.jpg", "Trips/wide@800x480.jpg"]
        for name in expected {
            #expect(first.output.contains("wrote \(library)/\(name)"), "\(name)")
        }
        let renditions = try Library(root: library).slides(in: LibraryCategory(name: "Trips", path: "\(library)/Trips"))
            .flatMap(\.renditions).map(\.path).sorted()
        #expect(renditions == expected.map { "\(library)/\($0)" })
        #expect(!first.output.contains("small@"))
        #expect(try originals.map { try FileBytes.read("\(library)/\($0)") } == before)

        // Baseline JPEGs of exactly the named size, turned upright: red on top, blue below.
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 64 << 20))
        let tall = "\(library)/Trips/tall@288x480.jpg"
        let header = try renderer.header(of: tall)
        #expect(
            header.jpeg?.process == .baseline && header.size == Size(width: 288, height: 480)
                && header.orientation == .up)
        let frame = try renderer.render(tall, options: RenderOptions(canvas: Size(width: 288, height: 480))).frame
        func near(_ pixel: UInt32, _ color: RGBColor) -> Bool {
            let red = Int(pixel >> 16 & 0xFF)
            let green = Int(pixel >> 8 & 0xFF)
            let blue = Int(pixel & 0xFF)
            return abs(red - Int(color.red)) <= 10 && abs(green - Int(color.green)) <= 10
                && abs(blue - Int(color.blue)) <= 10
        }
        #expect(near(frame.pixel(x: 144, y: 100), JPEGFixture.red))
        #expect(near(frame.pixel(x: 144, y: 380), JPEGFixture.blue))
        #expect(near(frame.pixel(x: 2, y: 2), JPEGFixture.red) && near(frame.pixel(x: 285, y: 477), JPEGFixture.blue))

        // A second run writes nothing and touches nothing.
        let times = expected.map { Self.modified("\(library)/\($0)") }
        let second = run(arguments)
        #expect(second.output.contains("renditions: 0 written, 3 up to date, 1 failed"))
        #expect(expected.map { Self.modified("\(library)/\($0)") } == times)

        // An original replaced by a newer file gets its renditions again; the others stay.
        let wide = "\(library)/Trips/wide.JPG"
        usleep(20_000)
        try FileBytes.writeAtomically(before[1], to: wide)
        let third = run(arguments)
        #expect(third.output.contains("renditions: 2 written, 1 up to date, 1 failed"))
        #expect(third.output.contains("wrote \(library)/Trips/wide@800x480.jpg"))
        // No temporary file is left behind.
        let hidden = try Self.hiddenNames(in: "\(library)/Trips")
        #expect(hidden.isEmpty, "\(hidden)")
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func thePlayerReadsTheRenditions() throws {
        let made = run([
            "renditions", "--config", "\(folder.path)/vitrine.json", "--profiles", "rpi-touch-display",
        ])
        #expect(made.status == 1)
        let binary = vitrineBinary
        // Trips on the 800x480 touch display: tall, then wide (broken is skipped).
        var pid: pid_t = 0
        let arguments = [
            binary, "play", "--config", "\(folder.path)/trips.json", "--snapshots", "\(folder.path)/frames",
            "--exit-after", "2",
        ]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 2, "\(folder.path)/play.log", O_WRONLY | O_CREAT, 0o644)
        #expect(posix_spawn(&pid, binary, &actions, nil, &argv, environ) == 0)
        var status: Int32 = 0
        for _ in 0..<400 where waitpid(pid, &status, WNOHANG) == 0 { usleep(50_000) }
        if kill(pid, 0) == 0 {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            Issue.record("the player did not exit after two slides")
        }
        let presented = try FileBytes.readText("\(folder.path)/frames/presented.jsonl")
        let files = presented.split(separator: "\n").compactMap { line -> String? in
            guard let record = try? JSONParser.parse(String(line)), case .object(let members) = record.kind,
                let file = members.first(where: { $0.key == "file" }), case .string(let path) = file.value.kind
            else { return nil }
            return path
        }
        #expect(files == ["\(library)/Trips/tall@288x480.jpg", "\(library)/Trips/wide@800x480.jpg"])
    }

    static func hiddenNames(in folder: String) throws -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = FileBytes.entry(entry).name
            if name.hasPrefix(".") && name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Screenshots and web images join the library: a PNG and a WebP larger than the panel get baseline-JPEG
    /// renditions like any photo, upright, their colours where they were.
    @Test func pngAndWebPOriginalsGetJPEGRenditions() throws {
        let size = Size(width: 1600, height: 960)
        let rgba = ImageFixture.quadrantsRGBA(size: size)
        try folder.write(
            "mixed/Shots/screen.png", try ImageFixture.png(samples: rgba, size: size, color: .rgba))
        try folder.write(
            "mixed/Shots/saved.webp", try ImageFixture.webp(rgba: rgba, size: size, lossless: false))
        try folder.write(
            "mixed.json",
            text: """
                {"library": "mixed", "deviceTable": "\(repositoryRoot)/Config/devices.json",
                 "display": {"backend": "headless", "headlessSize": "800x480"}}
                """)
        let result = run([
            "renditions", "--config", "\(folder.path)/mixed.json", "--profiles", "rpi-touch-display", "--jobs", "1",
        ])
        #expect(result.status == 0, "\(result.errors)")
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 64 << 20))
        for name in ["screen", "saved"] {
            let path = "\(folder.path)/mixed/Shots/\(name)@800x480.jpg"
            let header = try renderer.header(of: path)
            #expect(header.jpeg?.process == .baseline && header.size == Size(width: 800, height: 480), "\(name)")
            let frame = try renderer.render(path, options: RenderOptions(canvas: Size(width: 800, height: 480))).frame
            let corners = [(200, 120), (600, 120), (200, 360), (600, 360)].map { frame.pixel(x: $0.0, y: $0.1) }
            let colors = [JPEGFixture.red, JPEGFixture.green, JPEGFixture.blue, JPEGFixture.yellow]
            for (pixel, color) in zip(corners, colors) {
                let channels = [Int(pixel >> 16 & 0xFF), Int(pixel >> 8 & 0xFF), Int(pixel & 0xFF)]
                let wanted = [Int(color.red), Int(color.green), Int(color.blue)]
                #expect(zip(channels, wanted).allSatisfy { abs($0 - $1) <= 12 }, "\(name): \(channels) vs \(wanted)")
            }
        }
    }

    /// A library as phones fill it: JPEG, PNG, WebP, HEIC and AVIF. `vitrine renditions` writes a JPEG rendition for
    /// each photo larger than the panel, and a 48 MiB board (the 800x480 touch display's profile), which refuses
    /// the 12 MP HEIC itself (libheif decodes it whole), shows it through its rendition.
    @Test func aMixedLibraryGetsJPEGRenditionsAndTheHEICPlaysInA48MiBBudget() throws {
        let heif = "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/") + "/Fixtures/heif"
        let size = Size(width: 1600, height: 960)
        let rgba = ImageFixture.quadrantsRGBA(size: size)
        try folder.write("phones/Trip/screen.png", try ImageFixture.png(samples: rgba, size: size, color: .rgba))
        try folder.write("phones/Trip/saved.webp", try ImageFixture.webp(rgba: rgba, size: size, lossless: false))
        try folder.write(
            "phones/Trip/camera.jpg",
            try JPEGFixture.encode(rgb: ImageFixture.rgb(fromRGBA: rgba), size: size))
        try folder.write("phones/Trip/IMG_0001.HEIC", try FileBytes.read("\(heif)/phone-sized.heic"))
        try folder.write("phones/Trip/small.avif", try FileBytes.read("\(heif)/quadrants.avif"))
        try folder.write(
            "phones.json",
            text: """
                {"library": "phones", "deviceTable": "\(repositoryRoot)/Config/devices.json",
                 "display": {"backend": "headless", "headlessSize": "800x480"}}
                """)
        let result = run([
            "renditions", "--config", "\(folder.path)/phones.json", "--profiles", "rpi-touch-display", "--jobs", "1",
        ])
        #expect(result.status == 0, "\(result.errors)")
        let trip = "\(folder.path)/phones/Trip"
        for name in ["screen@800x480.jpg", "saved@800x480.jpg", "camera@800x480.jpg", "IMG_0001@640x480.jpg"] {
            #expect(FileBytes.exists("\(trip)/\(name)"), "\(name): \(result.output)")
        }
        // The AVIF is smaller than the panel: shown as it is, no rendition.
        #expect(!result.output.contains("small@"))

        let board = SlideRenderer(budget: MemoryBudget(limit: 48 << 20))
        let options = RenderOptions(canvas: Size(width: 800, height: 480))
        #expect {
            _ = try board.frames.render("\(trip)/IMG_0001.HEIC", options: options)
        } throws: { error in
            guard let error = error as? ImageError, case .overBudget = error.reason else { return false }
            return error.description.contains("vitrine renditions")
        }
        let slides = try Library(root: "\(folder.path)/phones").slides(
            in: LibraryCategory(name: "Trip", path: trip))
        let phone = try #require(slides.first { $0.id.name == "IMG_0001" })
        let shown = try board.render(phone, options: options)
        #expect(shown.files == ["\(trip)/IMG_0001@640x480.jpg"])
        let frame = shown.frame
        let corners = [(240, 120), (560, 120), (240, 360), (560, 360)].map { frame.pixel(x: $0.0, y: $0.1) }
        let colors: [(Int, Int, Int)] = [(230, 20, 20), (20, 200, 40), (30, 40, 220), (240, 220, 30)]
        for (pixel, color) in zip(corners, colors) {
            let channels = (Int(pixel >> 16 & 0xFF), Int(pixel >> 8 & 0xFF), Int(pixel & 0xFF))
            #expect(
                abs(channels.0 - color.0) <= 14 && abs(channels.1 - color.1) <= 14 && abs(channels.2 - color.2) <= 14,
                "\(channels) vs \(color)")
        }
    }
}
