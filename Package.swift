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
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        .target(name: "VitrineCore", swiftSettings: strict),
        .target(
            name: "VitrineImage",
            dependencies: ["VitrineCore", "CTurboJPEG", "CZlib"],
            swiftSettings: strict
        ),
        .target(
            name: "VitrineCLI",
            dependencies: ["VitrineCore", "VitrineImage", "CLinux"],
            swiftSettings: strict
        ),
        .executableTarget(name: "vitrine", dependencies: ["VitrineCLI"], swiftSettings: strict),
        .testTarget(name: "VitrineCoreTests", dependencies: ["VitrineCore"], swiftSettings: strict),
        .testTarget(
            name: "VitrineImageTests",
            dependencies: ["VitrineImage", "VitrineCore", "CTurboJPEG"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "VitrineCLITests",
            dependencies: ["VitrineCLI", "VitrineCore", "VitrineImage"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
