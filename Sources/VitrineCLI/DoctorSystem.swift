import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What `vitrine doctor` reads of the installation, below a root (`/`, or a frame's SD card mounted elsewhere):
/// the accounts, the unit, the devices, and who may read or write a path. Files are read as text, not through the
/// C library's account functions, so a mounted card's accounts are its own.
struct DoctorSystem {
    struct Account: Equatable {
        var name: String
        var uid: UInt32
        var gid: UInt32
        /// The primary group and every group that lists the user.
        var groups: [(name: String, gid: UInt32)]

        static func == (a: Account, b: Account) -> Bool { a.name == b.name && a.uid == b.uid }

        func inGroup(_ gid: UInt32) -> Bool { self.gid == gid || groups.contains { $0.gid == gid } }
    }

    /// What the service unit says: its user, state folder and config.
    struct Unit {
        var path: String
        var user = "vitrine"
        var stateDirectory: String?
        var config: String?
    }

    enum Access {
        case read, write
    }

    /// Where `/` is; every path below is taken under it.
    let root: String

    init(root: String) {
        self.root = root == "/" ? "" : (root.hasSuffix("/") ? String(root.dropLast()) : root)
    }

    /// `path` as it is under the root.
    func at(_ path: String) -> String { root + path }

    /// The running machine's own root (devices, memory, the network and the journal are this machine's).
    var isLive: Bool { root.isEmpty }

    /// The unit as installed (a drop-in's own lines are read too, later ones winning).
    func unit() -> Unit? {
        let places = ["/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"]
        guard let path = places.map({ "\($0)/vitrine.service" }).first(where: { FileBytes.exists(at($0)) }) else {
            return nil
        }
        var unit = Unit(path: path)
        var files = [at(path)]
        if let dropIns = try? Folder.entryNames(in: at("/etc/systemd/system/vitrine.service.d")) {
            files += dropIns.filter { $0.hasSuffix(".conf") }.sorted().map {
                at("/etc/systemd/system/vitrine.service.d/\($0)")
            }
        }
        for file in files {
            guard let text = try? FileBytes.readText(file) else { continue }
            for line in text.split(separator: "\n") {
                let words = line.split(separator: "=", maxSplits: 1).map(String.init)
                guard words.count == 2 else { continue }
                switch words[0].trimmingSpaces {
                case "User": unit.user = words[1].trimmingSpaces
                case "StateDirectory":
                    unit.stateDirectory = words[1].split(separator: " ").first.map { "/var/lib/\($0)" }
                case "ExecStart":
                    let parts = words[1].split(separator: " ").map(String.init)
                    if let index = parts.firstIndex(of: "--config"), index + 1 < parts.count {
                        unit.config = parts[index + 1]
                    }
                default: break
                }
            }
        }
        return unit
    }

    /// `name` from the root's /etc/passwd with its groups from /etc/group; nil when there is no such user.
    func account(_ name: String) -> Account? {
        guard let passwd = try? FileBytes.readText(at("/etc/passwd")) else { return nil }
        for line in passwd.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 4, fields[0] == name, let uid = UInt32(fields[2]), let gid = UInt32(fields[3])
            else { continue }
            var groups: [(String, UInt32)] = []
            for (group, number, members) in groupEntries() where number == gid || members.contains(name) {
                groups.append((group, number))
            }
            return Account(name: name, uid: uid, gid: gid, groups: groups)
        }
        return nil
    }

    /// Every group: its name, number and members.
    func groupEntries() -> [(name: String, gid: UInt32, members: [String])] {
        guard let text = try? FileBytes.readText(at("/etc/group")) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 4, let gid = UInt32(fields[2]) else { return nil }
            return (fields[0], gid, fields[3].split(separator: ",").map(String.init))
        }
    }

    func groupName(_ gid: UInt32) -> String {
        groupEntries().first { $0.gid == gid }?.name ?? String(gid)
    }

    /// The device files matching `prefix` in a folder of /dev (`dri`, `card`).
    func devices(in folder: String, prefix: String) -> [String] {
        let names = (try? Folder.entryNames(in: at(folder))) ?? []
        return names.filter { $0.hasPrefix(prefix) }.sorted().map { "\(folder)/\($0)" }
    }

    /// Whether `account` may read (or write) `path` by its mode bits, every folder above it searchable; nil when
    /// it may, else the path that stops it and why. Root may do anything (as the kernel lets it).
    func denies(_ access: Access, _ path: String, to account: Account) -> (path: String, why: String)? {
        guard account.uid != 0 else { return nil }
        var folders: [String] = []
        var partial = ""
        for component in path.split(separator: "/").dropLast() {
            partial += "/\(component)"
            folders.append(partial)
        }
        for folder in folders {
            guard let mode = mode(of: folder, for: account) else { return (folder, "it is not there") }
            if mode & 1 == 0 { return (folder, "\(account.name) may not enter it") }
        }
        guard let mode = mode(of: path, for: account), let kind = kind(of: path) else {
            return (path, "it is not there")
        }
        let wanted: UInt32 = (access == .read ? 4 : 2) | (kind == S_IFDIR ? 1 : 0)
        guard mode & wanted != wanted else { return nil }
        return (path, "\(account.name) may not \(access == .read ? "read" : "write") it")
    }

    /// The three permission bits that apply to `account` for `path` (owner, group or other).
    private func mode(of path: String, for account: Account) -> UInt32? {
        var info = stat()
        guard stat(at(path), &info) == 0 else { return nil }
        let bits = UInt32(info.st_mode)
        if info.st_uid == account.uid { return (bits >> 6) & 7 }
        if account.inGroup(info.st_gid) { return (bits >> 3) & 7 }
        return bits & 7
    }

    private func kind(of path: String) -> UInt32? {
        var info = stat()
        guard stat(at(path), &info) == 0 else { return nil }
        return UInt32(info.st_mode) & UInt32(S_IFMT)
    }

    /// The group a device file belongs to, and whether others may use it anyway.
    func deviceGroup(_ path: String) -> (gid: UInt32, open: Bool)? {
        var info = stat()
        guard stat(at(path), &info) == 0 else { return nil }
        return (info.st_gid, UInt32(info.st_mode) & 0o006 == 0o006)
    }

    /// How the folder's file system keeps what is written: nil for a disk, else why it will not last.
    func impermanence(of path: String) -> String? { StateDirectory.impermanence(of: at(path)) }

    /// Free bytes where `path` is, for an unprivileged user.
    func freeBytes(at path: String) -> Int? { diskSpace(at: path)?.free }

    /// Free bytes for an unprivileged user and the size of the file system where `path` is.
    func diskSpace(at path: String) -> (free: Int, total: Int)? { try? FileSystemSpace.of(at(path)) }

    /// The disk space the files under `path` take (their blocks), hidden ones too; symbolic links not followed.
    func bytesUsed(under path: String) -> Int {
        var total = 0
        var folders = [at(path)]
        while let folder = folders.popLast() {
            guard let directory = opendir(folder) else { continue }
            defer { closedir(directory) }
            while let pointer = readdir(directory) {
                let (name, _) = FileBytes.entry(pointer)
                guard name != ".", name != ".." else { continue }
                var status = stat()
                guard lstat("\(folder)/\(name)", &status) == 0 else { continue }
                if status.st_mode & S_IFMT == S_IFDIR {
                    folders.append("\(folder)/\(name)")
                } else {
                    total = total.saturatingPlus(Int(status.st_blocks).saturatingTimes(512))
                }
            }
        }
        return total
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
