import VitrineCore

/// libFuzzer entry: the device-table loader on any text, and profile lookups on what it accepts.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDevices(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let table = try DeviceTable.parse(text, file: "fuzz.json")
        for profile in table.profiles {
            _ = table.profile(for: PanelDescription(connector: profile.connectors.first, mode: profile.mode))
            _ = profile.minimumBudgetBytes
        }
        _ = table.profile(for: PanelDescription(mode: Size(width: 16384, height: 16384)))
    } catch {
        if !error.description.hasPrefix("fuzz.json") { fatalError("error without the file name: \(error)") }
    }
    return 0
}
