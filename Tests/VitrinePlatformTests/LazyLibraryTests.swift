import Testing
import VitrinePlatform

/// The libraries loaded when first needed: each loads (the packages the player depends on are installed), with
/// every function Vitrine calls in it, and a second load is the first one's result.
@Suite struct LazyLibraryTests {
    @Test(arguments: LazyLibrary.allCases)
    func loadsWithEveryFunctionVitrineCalls(library: LazyLibrary) throws {
        try library.load()
        #expect(library.isLoaded)
        try library.load()
    }

    @Test func namesTheFilesThePackagesInstall() {
        #expect(LazyLibrary.heif.soname == "libheif.so.1")
        #expect(LazyLibrary.dav1d.soname.hasPrefix("libdav1d.so."))
        #expect(LazyLibrary.input.soname == "libinput.so.10")
        #expect(LazyLibrary.mosquitto.soname == "libmosquitto.so.1")
        #expect(LazyLibrary.microhttpd.soname == "libmicrohttpd.so.12")
        #expect(LazyLibrary.qrencode.soname == "libqrencode.so.4")
    }

    @Test func aFailureNamesTheLibraryAndTheReason() {
        let error = LazyLibraryError(soname: "libheif.so.1", reason: "libheif.so.1: cannot open shared object file")
        #expect("\(error)" == "cannot load libheif.so.1: libheif.so.1: cannot open shared object file")
        #expect("\(error.runtimeError)".hasPrefix("cannot load libheif.so.1 (libheif.so.1: cannot open shared object"))
    }
}
