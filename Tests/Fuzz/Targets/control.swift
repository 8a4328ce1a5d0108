import VitrineCore

/// libFuzzer entry: the control-socket command parser on any line a client could send (over the socket or an
/// MQTT command topic), and the explanation of a refusal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if ControlCommand.parse(line) == nil { _ = ControlCommand.refusal(line) }
    return 0
}
