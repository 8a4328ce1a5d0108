import VitrineCore
import VitrinePlatform

/// The broker's user name and password, from a file kept out of the config (`LoginFile`: the user name on the first
/// line, the password on the second, refused when others can read it), with MQTT's errors.
public enum MQTTCredentials {
    public static func load(_ path: String) throws(MQTTError) -> LoginFile {
        do {
            return try LoginFile.load(path)
        } catch {
            throw MQTTError("credentials file \(path)", error.message, errno: error.errno)
        }
    }
}
