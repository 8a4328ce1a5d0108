import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension PlaceIndex {
    /// The index in `path`, memory-mapped: the header is checked now, each record as a lookup reads it.
    public static func load(path: String) throws(PlaceIndexError) -> PlaceIndex {
        let mapped: MappedFile
        do {
            mapped = try MappedFile(path: path, randomAccess: true)
        } catch {
            throw PlaceIndexError(file: path, message: "cannot \(error.operation): \(error.reason)")
        }
        return try PlaceIndex(bytes: mapped.bytes, owner: mapped, file: path)
    }

    /// Where an index is looked for when `placesFile` is not set, in order: beside an installed binary
    /// (`/usr/local/bin/vitrine` reads `/usr/local/share/vitrine/places.vgeo`, where deploy/install.sh puts it), then
    /// a distribution's place.
    public static func installedPaths() -> [String] {
        var paths: [String] = []
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 {
            let executable = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            paths.append(PathText.directory(of: PathText.directory(of: executable)) + "/share/vitrine/places.vgeo")
        }
        paths.append("/usr/share/vitrine/places.vgeo")
        return paths
    }

    /// The index file the settings name: `placesFile` when set ("" for none), else the first of `installedPaths()`
    /// that exists; nil for none.
    public static func path(settings: Settings) -> String? {
        if let file = settings.placesFile { return file.isEmpty ? nil : file }
        return installedPaths().first(where: FileBytes.exists)
    }
}
