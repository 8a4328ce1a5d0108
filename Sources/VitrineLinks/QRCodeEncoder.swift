import CQRencode
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Text to a QR code with libqrencode: error correction level M (15 % of the code may be unreadable: a glare on the
/// glass, a finger), the smallest version that holds it.
package enum QRCodeEncoder {
    /// Nil when the text does not fit a code, or libqrencode cannot be loaded.
    package static func matrix(for text: String) -> QRMatrix? {
        guard (try? LazyLibrary.qrencode.load()) != nil else { return nil }
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else { return nil }
        // The low bit of each byte is the module's colour; the others say what part of the symbol it is.
        let modules = (0..<width * width).map { data[$0] & 1 == 1 }
        return QRMatrix(width: width, modules: modules)
    }
}
