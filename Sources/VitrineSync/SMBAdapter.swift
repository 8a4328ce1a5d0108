import CSMBClient
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// SMB: Samba, Windows shares, NASes, through libsmbclient's context API (SMB2 and SMB3 only: SMB1 is off on every
/// current server and Windows). A share has no version tags: a file is unchanged while its size and time are.
final class SMBAdapter: SourceAdapter {
    private let context: UnsafeMutablePointer<SMBCCTX>
    private let location: RemoteLocation
    private let login: Login
    private let limiter: RateLimiter?
    private let opendir: smbc_opendir_fn
    private let readdir: smbc_readdirplus2_fn
    private let closedir: smbc_closedir_fn
    private let open: smbc_open_fn
    private let read: smbc_read_fn
    private let lseek: smbc_lseek_fn
    private let fstat: smbc_fstat_fn
    private let close: smbc_close_fn

    /// What the login callback hands libsmbclient; its address is the context's user data while the context lives.
    private final class Login {
        let workgroup: String?
        let user: String
        let password: String

        init(_ file: LoginFile?) {
            // `DOMAIN\user` names the domain (workgroup) too, as Windows writes it.
            if let file, let slash = file.user.firstIndex(of: "\\") {
                workgroup = String(file.user[..<slash])
                user = String(file.user[file.user.index(after: slash)...])
            } else {
                workgroup = nil
                user = file?.user ?? ""
            }
            password = file?.password ?? ""
        }
    }

    init(source: SourceSettings, login: LoginFile?) throws(SyncError) {
        location = source.location
        do {
            try LazyLibrary.smbclient.load()
        } catch {
            throw SyncError(.settings, source.location.description, error.description)
        }
        guard let context = smbc_new_context() else {
            throw SyncError(.local, source.location.description, "cannot make an SMB context", errno: errno)
        }
        self.login = Login(login)
        smbc_setDebug(context, 0)
        smbc_setOptionUserData(context, Unmanaged.passUnretained(self.login).toOpaque())
        smbc_setFunctionAuthDataWithContext(context) {
            context, _, _, workgroup, workgroupSize, user, userSize, password, passwordSize in
            guard let context, let data = smbc_getOptionUserData(context) else { return }
            let login = Unmanaged<Login>.fromOpaque(data).takeUnretainedValue()
            func copy(_ text: String, into buffer: UnsafeMutablePointer<CChar>?, size: Int32) {
                guard let buffer, size > 0 else { return }
                let bytes = Array(text.utf8.prefix(Int(size) - 1))
                for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
                buffer[bytes.count] = 0
            }
            if let domain = login.workgroup { copy(domain, into: workgroup, size: workgroupSize) }
            copy(login.user, into: user, size: userSize)
            copy(login.password, into: password, size: passwordSize)
        }
        smbc_setOptionUseKerberos(context, 0)
        // With a login given, a refused one is an error, not a silent fall back to the guest account.
        smbc_setOptionNoAutoAnonymousLogin(context, login == nil ? 0 : 1)
        smbc_setTimeout(context, Int32(min(source.timeout * 1000, 3_600_000)))
        if let port = source.location.port { smbc_setPort(context, UInt16(port)) }
        _ = smbc_setOptionProtocols(context, "SMB2_02", "SMB3")
        guard smbc_init_context(context) != nil else {
            let failure = errno
            smbc_free_context(context, 1)
            throw SyncError(.local, source.location.description, "cannot start libsmbclient", errno: failure)
        }
        guard let opendir = smbc_getFunctionOpendir(context), let readdir = smbc_getFunctionReaddirPlus2(context),
            let closedir = smbc_getFunctionClosedir(context), let open = smbc_getFunctionOpen(context),
            let read = smbc_getFunctionRead(context), let lseek = smbc_getFunctionLseek(context),
            let fstat = smbc_getFunctionFstat(context), let close = smbc_getFunctionClose(context)
        else {
            smbc_free_context(context, 1)
            throw SyncError(.local, source.location.description, "libsmbclient lacks a function it should have")
        }
        self.context = context
        self.opendir = opendir
        self.readdir = readdir
        self.closedir = closedir
        self.open = open
        self.read = read
        self.lseek = lseek
        self.fstat = fstat
        self.close = close
        limiter = source.bandwidthKiBps.map { RateLimiter(bytesPerSecond: Double($0) * 1024) }
    }

    deinit { smbc_free_context(context, 1) }

    /// libsmbclient takes URLs percent-decoded, like a browser's; the port goes through `smbc_setPort`.
    private func url(_ names: [String], isFolder: Bool) -> String {
        let path = (location.folders + names).map(RemoteLocation.percentEncoded).joined(separator: "/")
        return "smb://\(location.host)/\(path)\(isFolder ? "/" : "")"
    }

    /// The same with its port, for messages.
    private func place(_ names: [String], isFolder: Bool) -> String {
        location.url(below: names, isFolder: isFolder)
    }

    private func failure(_ place: String, _ what: String, errno code: Int32) -> SyncError {
        switch code {
        case EACCES, EPERM:
            return SyncError(.refused, place, "the server refused the login or access (\(what))", errno: code)
        case ENOENT, ENOTDIR:
            return SyncError(.settings, place, "not on the server (\(what))", errno: code)
        case ENOMEM, ENOSPC, EMFILE:
            return SyncError(.local, place, what, errno: code)
        default:
            // Refused, unreachable, timed out, reset, a share that went away: the server is not there for now.
            return SyncError(.offline, place, what, errno: code)
        }
    }

    func list(_ names: [String]) throws(SyncError) -> [RemoteEntry] {
        let place = place(names, isFolder: true)
        guard let folder = opendir(context, url(names, isFolder: true)) else {
            throw failure(place, "cannot open the folder", errno: errno)
        }
        defer { _ = closedir(context, folder) }
        var entries: [RemoteEntry] = []
        var seen: Set<String> = []
        var status = stat()
        while let info = readdir(context, folder, &status) {
            guard let raw = info.pointee.name else { continue }
            let name = String(cString: raw)
            if name == "." || name == ".." { continue }
            if let problem = RemoteName.problem(name) {
                throw SyncError(.badAnswer, place, "the folder listing names \(DAVHref.quoted(name)), which \(problem)")
            }
            guard seen.insert(name).inserted else { continue }
            let isFolder = status.st_mode & S_IFMT == S_IFDIR
            entries.append(
                RemoteEntry(
                    name: name, isFolder: isFolder, size: isFolder ? nil : Int64(status.st_size),
                    modified: Int64(status.st_mtim.tv_sec)))
        }
        return entries
    }

    func fetch(_ file: RemoteFile, into descriptor: Int32, from offset: Int64) throws(SyncError) -> Int64 {
        let place = place(file.path, isFolder: false)
        guard let remote = open(context, url(file.path, isFolder: false), O_RDONLY, 0) else {
            throw failure(place, "cannot open the file", errno: errno)
        }
        defer { _ = close(context, remote) }
        var start = offset
        var status = stat()
        guard fstat(context, remote, &status) == 0 else { throw failure(place, "cannot read its size", errno: errno) }
        if Int64(status.st_size) != file.size || file.modified.map({ Int64(status.st_mtim.tv_sec) != $0 }) == true {
            throw SyncError(.badAnswer, place, "the file changed on the server since it was listed")
        }
        if start > 0, lseek(context, remote, off_t(start), SEEK_SET) != off_t(start) {
            // A server that cannot seek: the file comes whole.
            guard ftruncate(descriptor, 0) == 0, Glibc.lseek(descriptor, 0, SEEK_SET) == 0 else {
                throw SyncError(.local, place, "cannot restart the partial file", errno: errno)
            }
            start = 0
        }
        var written = start
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(context, remote, $0.baseAddress, $0.count) }
            if count < 0 { throw failure(place, "the transfer failed", errno: errno) }
            if count == 0 { break }
            guard written <= file.size - Int64(count) else {
                throw SyncError(.badAnswer, place, "the file is larger than the \(file.size) bytes its listing said")
            }
            var done = 0
            while done < count {
                let result = chunk.withUnsafeBytes {
                    Glibc.write(descriptor, $0.baseAddress.map { $0 + done }, count - done)
                }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw SyncError(.local, place, "cannot write the file", errno: errno)
                }
                done += result
            }
            written += Int64(count)
            limiter?.account(count)
        }
        guard written == file.size else {
            throw SyncError(.offline, place, "the transfer ended after \(written) of \(file.size) bytes")
        }
        return written
    }
}
