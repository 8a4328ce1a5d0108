import CLazyLink

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A library loaded when first needed rather than at start (Sources/CLazyLink): what uses one calls `load()` first,
/// and a library that cannot be loaded is an error for that use (a HEIF photo skipped, MQTT off), never for the
/// process.
public enum LazyLibrary: CaseIterable, Sendable {
    case heif, dav1d, input, mosquitto, microhttpd, qrencode, freetype, curl, expat, smbclient
    case avutil, avcodec, avformat, swscale, swresample, asound

    private var raw: vitrine_lazy_library {
        switch self {
        case .heif: VITRINE_LAZY_HEIF
        case .dav1d: VITRINE_LAZY_DAV1D
        case .input: VITRINE_LAZY_INPUT
        case .mosquitto: VITRINE_LAZY_MOSQUITTO
        case .microhttpd: VITRINE_LAZY_MICROHTTPD
        case .qrencode: VITRINE_LAZY_QRENCODE
        case .freetype: VITRINE_LAZY_FREETYPE
        case .curl: VITRINE_LAZY_CURL
        case .expat: VITRINE_LAZY_EXPAT
        case .smbclient: VITRINE_LAZY_SMBCLIENT
        case .avutil: VITRINE_LAZY_AVUTIL
        case .avcodec: VITRINE_LAZY_AVCODEC
        case .avformat: VITRINE_LAZY_AVFORMAT
        case .swscale: VITRINE_LAZY_SWSCALE
        case .swresample: VITRINE_LAZY_SWRESAMPLE
        case .asound: VITRINE_LAZY_ASOUND
        }
    }

    /// What needs it, as a user would name it.
    public var purpose: String {
        switch self {
        case .heif: "HEIF and AVIF photos"
        case .dav1d: "AVIF photos"
        case .input: "keys and touch"
        case .mosquitto: "MQTT"
        case .microhttpd: "the web remote"
        case .qrencode: "the web remote's QR code"
        case .freetype: "text on screen"
        case .curl: "WebDAV sources"
        case .expat: "WebDAV sources' folder listings"
        case .smbclient: "SMB sources"
        case .avutil, .avcodec, .avformat, .swscale: "clips"
        case .swresample, .asound: "clips' sound"
        }
    }

    /// The file it is loaded by, as `ldd` would name it.
    public var soname: String { String(cString: vitrine_lazy_soname(raw)) }

    /// Loads it once (later calls are cheap and give the first call's result). Thread-safe; reads the library's
    /// files from the system's library folders on the first call only.
    public func load() throws(LazyLibraryError) {
        var why = [CChar](repeating: 0, count: 320)
        guard vitrine_lazy_load(raw, &why, why.count) == 0 else {
            let reason = String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw LazyLibraryError(soname: soname, reason: reason)
        }
    }

    public var isLoaded: Bool { vitrine_lazy_loaded(raw) != 0 }

    /// Whether a load has been tried (loaded, or known missing): `load()` then reads nothing from disk.
    public var hasBeenTried: Bool { vitrine_lazy_tried(raw) != 0 }
}

/// A library that could not be loaded: which, and the loader's reason (the file missing, a function missing).
public struct LazyLibraryError: Error, CustomStringConvertible, Equatable, Sendable {
    public let soname: String
    public let reason: String

    package init(soname: String, reason: String) {
        self.soname = soname
        self.reason = reason
    }

    public var description: String { "cannot load \(soname): \(reason)" }

    /// The same, for the subsystems whose errors are `RuntimeError`s.
    public var runtimeError: RuntimeError { RuntimeError("load \(soname) (\(reason))", errno: ELIBACC) }
}
