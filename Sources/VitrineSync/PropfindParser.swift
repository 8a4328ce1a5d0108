import CExpat
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads a WebDAV `207 Multi-Status` answer to PROPFIND (RFC 4918 §14) as it arrives, chunk by chunk, so a huge
/// listing is refused by its count without ever being held whole.
///
/// Elements are matched by namespace, not prefix: Apache writes `lp1:getetag`, others `D:getetag` or a default
/// namespace. A document type declaration is refused outright: PROPFIND answers have none, and entities are how
/// XML is made to expand without end.
final class PropfindParser {
    struct Response: Equatable {
        var href = ""
        var isFolder = false
        var size: Int64?
        var modified: Int64?
        var etag: String?
    }

    /// More responses than this in one folder's listing is an answer the frame will not use.
    static let maximumResponses = 200_000
    /// A value longer than this (an href, a tag) is not one a real server writes.
    static let maximumText = 8192
    static let maximumDepth = 32

    private(set) var responses: [Response] = []
    /// Why the answer was refused, once it has been.
    private(set) var failure: String?

    private let parser: OpaquePointer
    /// Local names of the open elements in DAV's namespace; nil for other namespaces' elements.
    private var open: [Field?] = []
    private var text: [UInt8] = []
    private var response = Response()
    /// What the current `propstat` says, used only when its status is 200.
    private var found = Response()
    private var status = ""

    private enum Field: String {
        case multistatus, response, href, propstat, prop, status, collection, resourcetype
        case getcontentlength, getlastmodified, getetag
        case other
    }

    init() throws(SyncError) {
        do {
            try LazyLibrary.expat.load()
        } catch {
            throw SyncError(.settings, "expat", error.description)
        }
        guard let parser = XML_ParserCreateNS(nil, CChar(UInt8(ascii: " "))) else {
            throw SyncError(.local, "expat", "cannot make an XML parser", errno: ENOMEM)
        }
        self.parser = parser
        XML_SetUserData(parser, Unmanaged.passUnretained(self).toOpaque())
        XML_SetElementHandler(
            parser,
            { context, name, _ in
                guard let context, let name else { return }
                Unmanaged<PropfindParser>.fromOpaque(context).takeUnretainedValue().start(name)
            },
            { context, _ in
                guard let context else { return }
                Unmanaged<PropfindParser>.fromOpaque(context).takeUnretainedValue().end()
            })
        XML_SetCharacterDataHandler(parser) { context, data, length in
            guard let context, let data, length > 0 else { return }
            Unmanaged<PropfindParser>.fromOpaque(context).takeUnretainedValue().characters(data, Int(length))
        }
        XML_SetStartDoctypeDeclHandler(parser) { context, _, _, _, _ in
            guard let context else { return }
            Unmanaged<PropfindParser>.fromOpaque(context).takeUnretainedValue().stop(
                "has a document type declaration, which a listing never needs")
        }
    }

    deinit { XML_ParserFree(parser) }

    /// Parses the next part of the answer; false once it has been refused (`failure` says why).
    func feed(_ bytes: UnsafeRawBufferPointer, isFinal: Bool) -> Bool {
        guard failure == nil else { return false }
        let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
        var offset = 0
        // XML_Parse takes an int length: a chunk above 2 GiB is fed in parts.
        repeat {
            let count = min(bytes.count - offset, 1 << 30)
            let last = isFinal && offset + count == bytes.count
            if XML_Parse(parser, base.map { $0 + offset }, Int32(count), last ? 1 : 0) != XML_STATUS_OK {
                if failure == nil {
                    let code = XML_GetErrorCode(parser)
                    let message = XML_ErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                    failure = "is not well-formed XML (line \(XML_GetCurrentLineNumber(parser)): \(message))"
                }
                return false
            }
            offset += count
        } while offset < bytes.count
        return failure == nil
    }

    private func stop(_ why: String) {
        if failure == nil { failure = why }
        XML_StopParser(parser, 0)
    }

    private func start(_ qualified: UnsafePointer<CChar>) {
        guard open.count < Self.maximumDepth else { return stop("nests elements deeper than \(Self.maximumDepth)") }
        let name = String(cString: qualified)
        var field: Field?
        if name.hasPrefix("DAV: ") { field = Field(rawValue: String(name.dropFirst(5))) ?? .other }
        switch field {
        case .response:
            response = Response()
        case .propstat:
            found = Response()
            status = ""
        case .collection where open.last == .resourcetype:
            found.isFolder = true
        default:
            break
        }
        text.removeAll(keepingCapacity: true)
        open.append(field)
    }

    private func end() {
        guard let closed = open.popLast() else { return }
        let value = String(decoding: text, as: UTF8.self)
        text.removeAll(keepingCapacity: true)
        switch closed {
        case .href where open.last == .response:
            response.href = value.trimmed
        case .status where open.last == .propstat:
            status = value
        case .getcontentlength:
            found.size = Int64(value.trimmed).flatMap { $0 >= 0 ? $0 : nil }
        case .getlastmodified:
            found.modified = HTTPDate.parse(Substring(value.trimmed))
        case .getetag:
            let tag = value.trimmed
            found.etag = tag.isEmpty || tag.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } ? nil : tag
        case .propstat:
            // "HTTP/1.1 200 OK": properties the server has; a 404 propstat lists those it lacks.
            guard status.split(separator: " ").dropFirst().first == "200" else { break }
            response.isFolder = response.isFolder || found.isFolder
            response.size = found.size ?? response.size
            response.modified = found.modified ?? response.modified
            response.etag = found.etag ?? response.etag
        case .response:
            guard responses.count < Self.maximumResponses else {
                return stop("lists more than \(Self.maximumResponses) entries in one folder")
            }
            responses.append(response)
        default:
            break
        }
    }

    private func characters(_ data: UnsafePointer<CChar>, _ count: Int) {
        switch open.last {
        case .href, .status, .getcontentlength, .getlastmodified, .getetag:
            guard text.count + count <= Self.maximumText else {
                return stop("has a value longer than \(Self.maximumText) bytes")
            }
            data.withMemoryRebound(to: UInt8.self, capacity: count) {
                text.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
            }
        default:
            break
        }
    }
}

extension String {
    fileprivate var trimmed: String {
        let scalars = unicodeScalars.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        let end = scalars.lastIndex { $0 != " " && $0 != "\n" && $0 != "\r" && $0 != "\t" }
        guard let end else { return "" }
        return String(scalars[...end])
    }
}
