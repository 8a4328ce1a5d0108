import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The libraries loaded when first needed (Sources/CLazyLink), as a user of the player meets them: a show of
/// JPEGs maps none of them, text on screen brings FreeType in when first due, and a HEIF photo whose library cannot
/// be loaded is skipped with a line that names the photo and the library, while the show goes on.
extension PlayEndToEndTests {
    static let lazyLibraries = [
        "libheif", "libx265", "libaom", "libde265", "libdav1d", "libmosquitto", "libssl", "libcrypto",
        "libmicrohttpd", "libgnutls", "libinput", "libwacom", "libglib", "libqrencode", "libfreetype", "libpng16",
        "libbrotlidec",
    ]

    /// The shared libraries a process has mapped, by file name.
    static func mappedLibraries(of pid: pid_t) -> Set<String> {
        let maps = (try? FileBytes.readText("/proc/\(pid)/maps")) ?? ""
        var names = Set<String>()
        for line in maps.split(separator: "\n") {
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last, path.hasPrefix("/")
            else { continue }
            names.insert(String(path.split(separator: "/").last ?? ""))
        }
        return names
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aShowOfJPEGsMapsNoneOfTheLibrariesLoadedWhenNeeded() throws {
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/vitrine.json", "--snapshots", snapshots],
            log: "\(folder.path)/play.log")
        defer { _ = player.stop() }
        guard eventually("the first slide", { presented().count == 1 }) else { return }
        let mapped = Self.mappedLibraries(of: player.pid)
        #expect(mapped.contains { $0.hasPrefix("libjpeg") }, "the JPEG decoder's library is mapped: \(mapped)")
        for library in Self.lazyLibraries {
            #expect(!mapped.contains { $0.hasPrefix(library + ".") }, "\(library) is mapped: \(mapped.sorted())")
        }
        #expect(player.stop() == 0)
    }

    /// The pixels of a 160x96 snapshot, RGB.
    func snapshotPixels(_ name: String) throws -> [UInt8] {
        let bytes = try FileBytes.read("\(snapshots)/\(name)")
        let header = Array("P6\n160 96\n255\n".utf8)
        try #require(Array(bytes.prefix(header.count)) == header && bytes.count == header.count + 160 * 96 * 3)
        return Array(bytes.dropFirst(header.count))
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func thePauseSignBringsFreeTypeInWhenFirstDue() throws {
        let player = try Running(
            arguments: ["play", "--config", "\(folder.path)/vitrine.json", "--snapshots", snapshots],
            log: "\(folder.path)/play.log")
        defer { _ = player.stop() }
        guard eventually("the first slide", { presented().count == 1 }) else { return }
        #expect(!Self.mappedLibraries(of: player.pid).contains { $0.hasPrefix("libfreetype.") })
        #expect(ctl("pause") == "ok")
        guard eventually("the pause sign", { FileBytes.exists("\(snapshots)/overlay-000001.ppm") }) else { return }
        #expect(Self.mappedLibraries(of: player.pid).contains { $0.hasPrefix("libfreetype.") })
        #expect(!player.output.contains("no on-screen text"), "\(player.output)")
        // The sign is text over the bottom of the slide it paused on: bright pixels there, none above.
        let overlays = try FileBytes.readText("\(snapshots)/overlays.jsonl")
        let after = try #require(
            overlays.split(separator: "\n").first?.split(separator: ",").first { $0.hasPrefix("\"after\":") })
        let sequence = String(after.dropFirst("\"after\":".count))
        let beneath = try snapshotPixels("\(String(repeating: "0", count: 6 - sequence.count))\(sequence).ppm")
        let sign = try snapshotPixels("overlay-000001.ppm")
        var changedBelow = 0
        var changedAbove = 0
        for y in 0..<96 {
            for x in 0..<160 {
                let offset = (y * 160 + x) * 3
                let changed = (0..<3).contains { abs(Int(sign[offset + $0]) - Int(beneath[offset + $0])) > 48 }
                if changed, y >= 48 { changedBelow += 1 }
                if changed, y < 48 { changedAbove += 1 }
            }
        }
        #expect(changedBelow >= 40, "pixels of the pause sign: \(changedBelow)")
        #expect(changedAbove == 0)
        #expect(player.stop() == 0)
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func aHEIFPhotoIsSkippedWhenLibheifCannotBeLoadedAndTheShowGoesOn() throws {
        // What the loader finds first under this name is not a library: a damaged or half-installed package.
        try folder.write("broken-libs/libheif.so.1", text: "not a shared library\n")
        let heif = try FileBytes.read("\(repositoryRoot)/Tests/Fixtures/heif/quadrants.heic")
        try folder.write("library/Alpha/b2.heic", heif)
        let player = try Running(
            arguments: [
                "play", "--config", "\(folder.path)/vitrine.json", "--snapshots", snapshots, "--interval", "0.3",
            ],
            log: "\(folder.path)/play.log", environment: ["LD_LIBRARY_PATH": "\(folder.path)/broken-libs"])
        defer { _ = player.stop() }
        #expect(
            eventually("the HEIF photo to be skipped") {
                player.output.contains("skipped \(library)/Alpha/b2.heic: cannot decode: cannot load libheif.so.1: ")
            })
        // The show goes round past it: every JPEG of Alpha shown, more than once.
        #expect(eventually("a second round") { presented().filter { $0["slide"] == "a" }.count >= 2 })
        #expect(!presented().contains { $0["slide"] == "b2" })
        #expect(player.stop() == 0)
    }
}
