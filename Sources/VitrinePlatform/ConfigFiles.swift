import VitrineCore

extension Settings {
    /// Loads a config file and resolves its relative paths against the file's folder.
    public static func load(path: String) throws(ConfigError) -> Settings {
        try parse(readConfig(path), file: path).resolvingPaths(relativeTo: PathText.directory(of: path))
    }
}

extension DeviceTable {
    public static func load(path: String) throws(ConfigError) -> DeviceTable {
        try parse(readConfig(path), file: path)
    }
}

private func readConfig(_ path: String) throws(ConfigError) -> String {
    do {
        return try FileBytes.readText(path)
    } catch {
        throw ConfigError(file: path, line: nil, path: "", message: "cannot read: \(error.reason)")
    }
}
