import VitrineCore

/// libFuzzer entry: the control-socket command parser on any line a client could send.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = ControlCommand.parse(line)
    return 0
}
