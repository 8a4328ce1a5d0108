import VitrineCore

/// libFuzzer entry: what a WebDAV server (or something pretending to be one) and the cache's own files feed a sync:
/// hrefs taken apart against the listed folder, the manifest, the sync process's report lines, HTTP dates and
/// source URLs. Each line of the input is tried as each. Checked, not only survived: a name an href yields can
/// never leave the cache, and a manifest read back writes the same text.
private let location =
    (try? RemoteLocation.parse("https://nas.lan:5006/dav/Photos%20Frame/").get())
    ?? RemoteLocation(scheme: .https, host: "nas.lan", port: 5006, folders: ["dav", "Photos Frame"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSync(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(64) {
        for folder in [[], ["2024", "Sommer é"]] {
            if case .success(.child(let name)) = DAVHref.meaning(of: String(line), location: location, folder: folder) {
                if name.contains("/") || name == ".." || name == "." || name.isEmpty || name.contains("\0") {
                    fatalError("an href gave the name \(name)")
                }
            }
        }
        _ = SyncReport.parse(String(line))
        _ = HTTPDate.parse(line)
        _ = HTTPDate.retryAfter(line, now: 1_700_000_000)
        _ = RemoteLocation.parse(String(line))
    }
    if let manifest = SyncManifest.parse(text) {
        guard SyncManifest.parse(manifest.text()) == manifest else { fatalError("the manifest does not round-trip") }
        for entry in manifest.entries where entry.local.split(separator: "/").contains("..") {
            fatalError("a manifest entry leaves the library: \(entry.local)")
        }
    }
    return 0
}
