/// The release this build is: `vitrine --version`, the state published over MQTT, Home Assistant's device page.
public enum VitrineVersion {
    public static let string = "0.1.0"
}
