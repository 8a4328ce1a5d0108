import VitrineCore

/// libFuzzer entry: the config loader (JSON reader with line numbers, then every key's checks) on any text.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSettings(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try Settings.parse(text, file: "fuzz.json")
    } catch {
        // A refusal must name the file.
        if !error.description.hasPrefix("fuzz.json") { fatalError("error without the file name: \(error)") }
    }
    return 0
}
