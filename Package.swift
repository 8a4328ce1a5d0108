// swift-tools-version: 6.2
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

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
            name: "CLibInput",
            pkgConfig: "libinput",
            providers: [.apt(["libinput-dev"])]
        ),
        .systemLibrary(
            name: "CFreeType",
            pkgConfig: "freetype2",
            providers: [.apt(["libfreetype-dev"])]
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
            name: "CHeif",
            pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"])]
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
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CCEC"),
        .target(name: "VitrineCore", swiftSettings: strict),
        .target(
            name: "VitrineImage",
            dependencies: ["VitrineCore", "CJPEG", "CZlib", "CFreeType", "CSPNG", "CWebP", "CHeif", "CLCMS"],
            swiftSettings: strict
        ),
        .target(
            name: "VitrineRuntime",
            dependencies: [
                "VitrineCore", "VitrineImage", "CDRM", "CUdev", "CLibInput", "CLinux", "CGPIOD", "CMosquitto", "CCEC",
                "CMicroHTTPD", "CQRencode",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "VitrineCLI",
            dependencies: ["VitrineCore", "VitrineImage", "VitrineRuntime", "CLinux"],
            swiftSettings: strict
        ),
        .executableTarget(name: "vitrine", dependencies: ["VitrineCLI"], swiftSettings: strict),
        .target(
            name: "VitrineTestSupport",
            dependencies: ["VitrineCore", "CTurboJPEG", "CSPNG", "CWebP", "CLCMS"],
            path: "Tests/VitrineTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineCoreTests", dependencies: ["VitrineCore", "VitrineTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "VitrineImageTests",
            dependencies: ["VitrineImage", "VitrineCore", "VitrineTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineRuntimeTests",
            dependencies: ["VitrineRuntime", "VitrineCore", "VitrineTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineCLITests",
            dependencies: ["VitrineCLI", "VitrineCore", "VitrineImage", "VitrineRuntime", "VitrineTestSupport"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
