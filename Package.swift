// swift-tools-version: 6.2
import PackageDescription

// Each function in its own section in release builds, so the linker can lay out the code play runs together from
// Sources/vitrine/symbol-order.txt; without it a module is one section and only modules are ordered.
// FreeType's headers are under freetype2/ (Debian, Raspberry Pi OS): pkg-config would say so, but it would link the
// library too, which is loaded when first needed instead (CFreeType). Every module that sees VitrineImage's
// interface needs the path.
let freeTypeHeaders: SwiftSetting = .unsafeFlags(["-Xcc", "-I/usr/include/freetype2"])
// libsmbclient's under samba-4.0/, for the same reason (CSMBClient).
let sambaHeaders: SwiftSetting = .unsafeFlags(["-Xcc", "-I/usr/include/samba-4.0"])
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error), .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
    freeTypeHeaders, sambaHeaders,
]

let package = Package(
    name: "Vitrine",
    products: [
        .executable(name: "vitrine", targets: ["vitrine"])
    ],
    targets: [
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        .systemLibrary(
            name: "CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CDRM",
            pkgConfig: "libdrm",
            providers: [.apt(["libdrm-dev"])]
        ),
        .systemLibrary(
            name: "CUdev",
            pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]
        ),
        .systemLibrary(
            name: "CSPNG",
            pkgConfig: "spng",
            providers: [.apt(["libspng-dev"])]
        ),
        .systemLibrary(
            name: "CWebP",
            pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"])]
        ),
        .systemLibrary(
            name: "CLCMS",
            pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"])]
        ),
        .systemLibrary(
            name: "CGPIOD",
            pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]
        ),
        // Loaded when first needed, not at start (Sources/CLazyLink): only their headers here, no pkg-config, so
        // nothing links them. Packages: libheif-dev, libdav1d-dev, libinput-dev, libmosquitto-dev,
        // libmicrohttpd-dev, libqrencode-dev, libfreetype-dev (whose headers are under freetype2/: see
        // `freeTypeHeaders`).
        .systemLibrary(name: "CHeif"),
        .systemLibrary(name: "CDav1d"),
        .systemLibrary(name: "CLibInput"),
        .systemLibrary(name: "CMosquitto"),
        .systemLibrary(name: "CMicroHTTPD"),
        .systemLibrary(name: "CQRencode"),
        .systemLibrary(name: "CFreeType"),
        // libcurl and expat for WebDAV sources, loaded by `vitrine sync` only (libcurl4-openssl-dev, libexpat1-dev).
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CExpat", providers: [.apt(["libexpat1-dev"])]),
        // libsmbclient for SMB sources, loaded by `vitrine sync` only (libsmbclient-dev).
        .systemLibrary(name: "CSMBClient", providers: [.apt(["libsmbclient-dev"])]),
        // FFmpeg for clips, loaded by the first clip (libavformat-dev, libavcodec-dev, libavutil-dev, libswscale-dev).
        .systemLibrary(
            name: "CFFmpeg",
            providers: [
                .apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])
            ]),
        // ALSA for a clip's sound, loaded by the first clip that plays sound (libasound2-dev).
        .systemLibrary(name: "CALSA", providers: [.apt(["libasound2-dev"])]),
        // The stubs those libraries' functions are called through, and their loader.
        .target(name: "CLazyLink", cSettings: [.unsafeFlags(["-ffunction-sections"], .when(configuration: .release))]),
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CCEC"),
        // Values, parsers and state machines: no system call, no C library, nothing but the standard library.
        .target(name: "VitrineCore", swiftSettings: strict),
        // The system underneath: files, descriptors, timers, the event loop, threads, clocks, the log.
        .target(name: "VitrinePlatform", dependencies: ["VitrineCore", "CLinux", "CLazyLink"], swiftSettings: strict),
        // Decoding, scaling, colour, rendering a slide and writing renditions.
        .target(
            name: "VitrineImage",
            dependencies: [
                "VitrineCore", "VitrinePlatform", "CJPEG", "CZlib", "CFreeType", "CSPNG", "CWebP", "CHeif", "CDav1d",
                "CLCMS", "CFFmpeg", "CALSA",
            ],
            swiftSettings: strict
        ),
        // The screen: DRM/KMS, fbdev, headless, the VT, hotplug, the display controller, fades and overlays.
        .target(
            name: "VitrineDisplay",
            dependencies: ["VitrineCore", "VitrinePlatform", "VitrineImage", "CDRM", "CUdev", "CLinux"],
            swiftSettings: strict
        ),
        // Keys, buttons and presence: libinput, GPIO lines.
        .target(
            name: "VitrineInput",
            dependencies: ["VitrineCore", "VitrinePlatform", "CLibInput", "CUdev", "CGPIOD", "CLinux"],
            swiftSettings: strict
        ),
        // The photo library on disk: listing, watching, indexing, renditions, decoding, the saved position.
        .target(
            name: "VitrineLibrary",
            dependencies: ["VitrineCore", "VitrinePlatform", "VitrineImage", "CLinux"],
            swiftSettings: strict
        ),
        // Remote folders mirrored into the library: WebDAV through libcurl, SMB through libsmbclient, the manifest,
        // resuming, the limits.
        .target(
            name: "VitrineSync",
            dependencies: [
                "VitrineCore", "VitrinePlatform", "VitrineImage", "CCurl", "CExpat", "CSMBClient", "CLinux",
            ],
            swiftSettings: strict
        ),
        // The player's links to the world: the control socket, MQTT, the web remote, HDMI-CEC, metrics.
        .target(
            name: "VitrineLinks",
            dependencies: [
                "VitrineCore", "VitrinePlatform", "VitrineImage", "VitrineLibrary", "CMosquitto", "CMicroHTTPD", "CCEC",
                "CQRencode", "CLinux",
            ],
            swiftSettings: strict
        ),
        // The composition root: the player's loop and the wiring of the rooms above.
        .target(
            name: "VitrineRuntime",
            dependencies: [
                "VitrineCore", "VitrinePlatform", "VitrineImage", "VitrineDisplay", "VitrineInput", "VitrineLibrary",
                "VitrineLinks", "CLinux",
            ],
            swiftSettings: strict
        ),
        // The command line: play, render, probe, ctl, renditions, bench, check-config, sync.
        .target(
            name: "VitrineCLI",
            dependencies: [
                "VitrineCore", "VitrinePlatform", "VitrineImage", "VitrineDisplay", "VitrineLibrary", "VitrineLinks",
                "VitrineRuntime", "VitrineSync", "VitrineInput", "CLinux",
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "vitrine", dependencies: ["VitrineCLI"], exclude: ["symbol-order.txt", "static-cxx"],
            swiftSettings: strict,
            linkerSettings: [
                .unsafeFlags([
                    "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker",
                    "--no-export-dynamic", "-Xlinker",
                    "--symbol-ordering-file=\(Context.packageDirectory)/Sources/vitrine/symbol-order.txt",
                    "-Xlinker", "--no-warn-symbol-ordering",
                ]),
                // GCC's libstdc++.a instead of libstdc++.so.6: Sources/vitrine/static-cxx/libstdc++.so says why.
                .unsafeFlags(
                    ["-L\(Context.packageDirectory)/Sources/vitrine/static-cxx"], .when(configuration: .release)),
            ]),
        .target(
            name: "VitrineTestSupport",
            dependencies: ["VitrineCore", "VitrinePlatform", "CTurboJPEG", "CSPNG", "CWebP", "CLCMS"],
            path: "Tests/VitrineTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineCoreTests", dependencies: ["VitrineCore", "VitrinePlatform", "VitrineTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "VitrineImageTests",
            dependencies: ["VitrineImage", "VitrineCore", "VitrinePlatform", "VitrineTestSupport", "CHeif", "CFFmpeg"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrinePlatformTests", dependencies: ["VitrinePlatform", "VitrineCore", "VitrineTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "VitrineDisplayTests",
            dependencies: [
                "VitrineDisplay", "VitrineCore", "VitrinePlatform", "VitrineImage", "VitrineTestSupport", "CLinux",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineLibraryTests",
            dependencies: [
                "VitrineLibrary", "VitrineCore", "VitrinePlatform", "VitrineImage", "VitrineTestSupport", "CLinux",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineLinksTests",
            dependencies: [
                "VitrineLinks", "VitrineLibrary", "VitrineCore", "VitrinePlatform", "VitrineImage",
                "VitrineTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineCLITests",
            dependencies: [
                "VitrineCLI", "VitrineCore", "VitrinePlatform", "VitrineImage", "VitrineDisplay", "VitrineLibrary",
                "VitrineLinks", "VitrineRuntime", "VitrineTestSupport", "CLinux",
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
