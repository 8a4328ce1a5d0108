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
/// JPEGs maps none of them, and a HEIF photo whose library cannot be loaded is skipped with a line that names the
/// photo and the library, while the show goes on.
extension PlayEndToEndTests {
    static let lazyLibraries = [
        "libheif", "libx265", "libaom", "libde265", "libdav1d", "libmosquitto", "libssl", "libcrypto",
        "libmicrohttpd", "libgnutls", "libinput", "libwacom", "libglib", "libqrencode",
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
