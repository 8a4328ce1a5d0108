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

/// Records what a command prints.
final class RecordingConsole: Console {
    var output = ""
    var errors = ""

    func out(_ text: String) { output += text }
    func error(_ text: String) { errors += text }

    /// Runs `vitrine` with `arguments`: its exit status and what it printed.
    static func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
        let console = RecordingConsole()
        let status = VitrineCommand.run(arguments: arguments, console: console)
        return (status, console.output, console.errors)
    }
}

@Suite struct CommandTests {
    let folder: TemporaryFolder
    let devices = "\(repositoryRoot)/Config/devices.json"

    init() throws {
        folder = try TemporaryFolder()
    }

    func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
        RecordingConsole.run(arguments)
    }

    @Test(arguments: [
        (["render", "a.jpg", "--panel", "800x480"], "vitrine render: missing --output FILE or --output-dir DIR"),
        (["render", "a.jpg", "--panel", "800y480", "--output", "x.png"], "vitrine render: --panel 800y480: expected"),
        (
            ["render", "a.jpg", "--output", "x.gif"],
            "vitrine render: --output x.gif: the name must end in .ppm or .png"
        ),
        (
            ["render", "a.jpg", "--fit", "stretch", "--output", "x.png"],
            "vitrine render: --fit stretch: expected contain|cover"
        ),
        (
            ["render", "a.jpg", "--rotate", "45", "--output", "x.png"],
            "vitrine render: --rotate 45: expected 0, 90, 180 or 270"
        ),
        (["render", "a.jpg", "--bogus"], "vitrine render: unknown option --bogus"),
        (["render", "a.jpg", "--output"], "vitrine render: --output needs a value (FILE)"),
        (["probe", "--panel", "800x480", "extra"], "vitrine probe: unexpected argument 'extra'"),
        (["bench", "x.jpg"], "vitrine bench: missing --panel WxH"),
        (["bench", "x.jpg", "--panel", "800x480", "--runs", "0"], "vitrine bench: --runs 0: expected a number from 1"),
        (["frobnicate"], "vitrine: unknown subcommand 'frobnicate'"),
    ])
    func usageErrorsExitTwoWithOneLine(arguments: [String], message: String) {
        let result = run(arguments)
        #expect(result.status == 2)
        #expect(result.errors.hasPrefix(message))
        #expect(result.errors.filter { $0 == "\n" }.count == 1)
        #expect(result.output.isEmpty)
    }

    @Test func helpAndVersion() {
        #expect(run(["--version"]) == (0, "vitrine \(VitrineCommand.version)\n", ""))
        for command in ["render", "probe", "bench"] {
            let result = run([command, "--help"])
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("usage: vitrine \(command) "))
            #expect(result.output.contains("--panel"))
        }
        let top = run(["--help"])
        #expect(top.status == 0 && top.output.contains("render") && top.output.contains("probe"))
        #expect(run([]).status == 2)
    }

    @Test func rendersAPhotoToAPPMTheSizeOfThePanel() throws {
        let size = Size(width: 200, height: 100)
        let photo = try folder.write(
            "p.jpg", try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.blue, size: size), size: size))
        let output = "\(folder.path)/p.ppm"
        let result = run(["render", photo, "--panel", "80x80", "--background", "FF0000", "--output", output])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("80x80 from \(photo)"))
        let ppm = try FileBytes.read(output)
        let header = Array("P6\n80 80\n255\n".utf8)
        #expect(Array(ppm.prefix(header.count)) == header)
        #expect(ppm.count == header.count + 80 * 80 * 3)
        // Row 0 is letterbox (red); row 40 is the photo (blue).
        #expect(Array(ppm[header.count..<header.count + 3]) == [255, 0, 0])
        let middle = header.count + (40 * 80 + 40) * 3
        #expect(ppm[middle] < 40 && ppm[middle + 2] > 180)
    }

    @Test func aBrokenPhotoExitsOneNamingTheFile() throws {
        let broken = try folder.write("broken.jpg", Array("not a photo".utf8))
        let result = run(["render", broken, "--panel", "800x480", "--output", "\(folder.path)/x.png"])
        #expect(result.status == 1)
        #expect(
            result.errors
                == "vitrine render: \(broken): not a photo Vitrine can show (starts with 0x6E 0x6F 0x74 0x20); it shows JPEG, "
                + "PNG, WebP, HEIF, AVIF and clips (MP4, MOV, MKV, WebM)\n"
        )
        #expect(!FileBytes.exists("\(folder.path)/x.png"))
    }

    @Test func aLibraryRendersOneFramePerSlideAndGoesOnPastBrokenPhotos() throws {
        let size = Size(width: 64, height: 48)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.green, size: size), size: size)
        try folder.write("lib/Trips/a.jpg", jpeg)
        try folder.write("lib/Trips/a@32x24.jpg", jpeg)
        try folder.write("lib/Family/b.jpg", jpeg)
        try folder.write("lib/Family/bad.jpg", [0, 1, 2])
        try folder.write("lib/top.jpg", jpeg)
        let out = "\(folder.path)/frames"
        let result = run(["render", "\(folder.path)/lib", "--panel", "40x30", "--output-dir", out])
        #expect(result.status == 1)
        #expect(result.errors.contains("bad.jpg: not a photo Vitrine can show"))
        #expect(result.output.contains("3 frame(s) of 40x30 written to \(out), 1 failed"))
        for name in ["top", "Trips_a", "Family_b"] { #expect(FileBytes.exists("\(out)/\(name).png"), "\(name)") }
        // The 32x24 rendition would have to be enlarged for 40x30, so the original is read.
        #expect(result.output.contains("Trips_a.png: 40x30 from \(folder.path)/lib/Trips/a.jpg"))
    }

    @Test func probeNamesTheProfileInTextAndJSON() {
        let text = run(["probe", "--panel", "720x1280", "--connector", "DSI-1", "--devices", devices])
        #expect(text.status == 0)
        #expect(text.output.contains("profile:   rpi-touch-display-2"))
        #expect(text.output.contains("compose:   1280x720\n"))
        #expect(text.output.contains("rotation:  90\n"))
        let json = run(["probe", "--panel", "3840x2160", "--connector", "HDMI-A-1", "--json", "--devices", devices])
        #expect(json.status == 0)
        #expect(json.output.contains("\"profile\": \"uhd-4k-tv\""))
        #expect(json.output.contains("\"compose\": \"1920x1080\""))
        #expect(json.output.contains("\"composesBelowNative\": true"))
        let parsed = try? JSONParser.parse(json.output)
        #expect(parsed != nil)
        let unknown = run(["probe", "--panel", "1600x900", "--devices", devices])
        #expect(unknown.output.contains("(derived, not in the table)"))
    }

    @Test func probeSaysWhetherEachLibraryLoadedWhenNeededLoadsHere() throws {
        let text = run(["probe", "--devices", devices])
        #expect(text.status == 0)
        #expect(text.output.contains("libraries loaded when first needed:\n"))
        #expect(text.output.contains("  libheif.so.1 (HEIF and AVIF photos): loads\n"))
        #expect(text.output.contains("  libmicrohttpd.so.12 (the web remote): loads\n"))
        let json = run(["probe", "--devices", devices, "--json"])
        let parsed = try JSONParser.parse(json.output)
        guard case .object(let fields) = parsed.kind,
            case .array(let libraries)? = fields.first(where: { $0.key == "libraries" })?.value.kind
        else {
            Issue.record("no libraries in \(json.output)")
            return
        }
        #expect(libraries.count == LazyLibrary.allCases.count)
        for library in libraries {
            guard case .object(let entry) = library.kind else { continue }
            #expect(entry.first { $0.key == "loads" }?.value.kind == .bool(true), "\(json.output)")
        }
    }

    @Test func aBadDeviceTableIsRefusedWithFileLineAndKey() throws {
        let table = try folder.write(
            "devices.json",
            text:
                "{\"version\": 1,\n \"profiles\": [{\"id\": \"a\", \"name\": \"A\", \"match\": {\"mode\": \"800x480\"},\n"
                + " \"compose\": \"800x480\", \"rendition\": \"800x480\", \"memoryBudgetMiB\": 32, \"fit\": \"zoom\"}],\n"
                + " \"fallback\": {}}")
        let result = run(["probe", "--panel", "800x480", "--devices", table])
        #expect(result.status == 1)
        #expect(
            result.errors.hasPrefix("vitrine probe: \(table):3: profiles[0] (id \"a\").fit: \"zoom\" is not allowed"))
    }

    @Test func benchReportsTimesScaleAndPeakMemory() throws {
        let size = Size(width: 640, height: 480)
        let photo = try folder.write(
            "b.jpg", try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.red, size: size), size: size))
        let result = run(["bench", photo, "--panel", "160x120", "--runs", "3", "--tsv"])
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.first?.first == "file")
        let row = try #require(lines.dropFirst().first)
        #expect(row[0] == "b.jpg" && row[3] == "1/4" && row[4] == "160x120")
        let median = try #require(Double(row[6]))
        #expect(median > 0)
        let peak = try #require(lines.last { $0.first == "peak_rss_kib" })
        #expect((Int(peak[1]) ?? 0) > 1000)
    }

    /// The real executable, as a user runs it: exit status and message, and no signal, for a broken file.
    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func theExecutableExitsCleanlyOnABrokenPhoto() throws {
        let binary = vitrineBinary
        let broken = try folder.write("zero.jpg", [])
        var pid: pid_t = 0
        let arguments = [binary, "render", broken, "--panel", "800x480", "--output", "\(folder.path)/z.png"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, binary, nil, nil, &argv, environ)
        #expect(spawned == 0)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let signalled = status & 0x7F != 0
        #expect(!signalled)
        #expect((status >> 8) & 0xFF == 1)
    }
}
