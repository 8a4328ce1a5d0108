import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The web remote's access token: 32 random bytes written as 64 hex digits, made at first start and kept in a file
/// only the player's user can read (mode 600), so the QR code a phone scanned stays good across restarts until
/// the owner rotates it.
public struct AccessToken: Equatable, Sendable {
    public let value: String

    /// The token in `path`, made when the file is missing or does not hold one. A file others could read is
    /// narrowed to 600 first: it is the player's own.
    public static func loadOrCreate(_ path: String) throws(FileError) -> (token: AccessToken, created: Bool) {
        if FileBytes.exists(path) {
            if chmod(path, 0o600) != 0 { throw FileError(path: path, operation: "chmod 600", errno: errno) }
            let text = try FileBytes.readText(path).trimmingWhitespace()
            if isToken(text) { return (AccessToken(value: text), false) }
        }
        return (try rotate(path), true)
    }

    /// A new token replaces the old one at once: every paired phone must scan again.
    public static func rotate(_ path: String) throws(FileError) -> AccessToken {
        let token = AccessToken(value: try randomHex(bytes: 32))
        try FileBytes.writeAtomically(Array((token.value + "\n").utf8), to: path, durable: true, mode: 0o600)
        return token
    }

    static func isToken(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func randomHex(bytes count: Int) throws(FileError) -> String {
        let urandom = Descriptor(taking: open("/dev/urandom", O_RDONLY | O_CLOEXEC))
        let descriptor = urandom.number
        guard descriptor >= 0 else { throw FileError(path: "/dev/urandom", operation: "open", errno: errno) }
        // `urandom` closes it when this returns.
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes {
                read(descriptor, $0.baseAddress.map { $0 + filled }, count - filled)
            }
            guard got > 0 else {
                throw FileError(path: "/dev/urandom", operation: "read", errno: got < 0 ? errno : EIO)
            }
            filled += got
        }
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
