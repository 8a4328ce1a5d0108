import VitrineCore
import VitrinePlatform

/// A photo that cannot be shown, naming the file and why, on one line.
public struct ImageError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        case unreadable(FileError)
        case empty
        /// A folder, FIFO, device or socket with a photo's name; the text says which.
        case notRegularFile(String)
        /// The bytes are not JPEG; the associated text says what they look like instead.
        case notJPEG(String)
        /// The bytes are none of the formats Vitrine reads; the text says what they look like.
        case unknownFormat(String)
        /// A JPEG's markers are broken (or, for a slide or rendition, what is wrong with it).
        case malformed(String)
        case unsupported(String)
        /// A PNG's or WebP's structure is broken: the format and what is wrong.
        case damaged(ImageFormat, String)
        /// A PNG or WebP uses something Vitrine does not show.
        case unsupportedVariant(ImageFormat, String)
        case tooManyPixels(Size, limitMegapixels: Double)
        case overBudget(MemoryBudget.Exceeded)
        /// libjpeg-turbo's own message: unusable or truncated data.
        case decodeFailed(String)
        /// A rendition could not be written (the file names the rendition, the error what failed).
        case cannotWrite(FileError)
        case encodeFailed(String)
        /// The decode was called off midway (the slide is no longer wanted, or the player is stopping).
        case cancelled
        /// The player stopped while decoding this file at several starts: it is skipped (the text says how to try
        /// it again).
        case setAside(String)
        /// A clip this board decodes too slowly to show; the text says how fast and what to do.
        case tooSlow(String)
    }

    public var file: String
    public var reason: Reason

    public init(file: String, reason: Reason) {
        self.file = file
        self.reason = reason
    }

    public var reasonText: String {
        switch reason {
        case .unreadable(let error): return "cannot \(error.operation): \(error.reason)"
        case .empty: return "empty file (0 bytes)"
        case .notRegularFile(let kind): return "not a regular file (\(kind)); only regular files are photos"
        case .notJPEG(let what): return "not a JPEG file (\(what))"
        case .unknownFormat(let what):
            return "not a photo Vitrine can show (\(what)); it shows \(ImageFormat.shownList)"
        case .malformed(let what): return "malformed JPEG: \(what)"
        case .unsupported(let what): return "unsupported JPEG: \(what)"
        case .damaged(let format, let what): return "malformed \(format.rawValue): \(what)"
        case .unsupportedVariant(let format, let what): return "unsupported \(format.rawValue): \(what)"
        case .tooManyPixels(let size, let limit):
            let megapixels = Double(Int(Double(size.pixelCount) / 100_000)) / 10
            if limit * 1_000_000 >= Double(ImageHeader.largestPixelCount) {
                return
                    "\(size) is \(megapixels) megapixels, above the \(ConfigObject.format(limit)) megapixels no photo "
                    + "may have; refused before decoding"
            }
            return "\(size) is \(megapixels) megapixels, above the limit of \(ConfigObject.format(limit)) "
                + "(maxMegapixels); refused before decoding"
        case .overBudget(let exceeded) where Library.isClipName(file):
            return
                "refused: \(exceeded); a smaller copy of the clip avoids this (see \"Preparing clips\" in the README)"
        case .overBudget(let exceeded):
            return
                "refused: \(exceeded); a smaller rendition beside it (NAME@WxH.jpg, which `vitrine renditions` makes) "
                + "avoids this"
        case .decodeFailed(let message): return "cannot decode: \(message)"
        case .cannotWrite(let error): return "cannot \(error.operation): \(error.reason)"
        case .encodeFailed(let message): return "cannot encode: \(message)"
        case .cancelled: return "decoding was called off"
        case .setAside(let why): return "set aside: \(why)"
        case .tooSlow(let why): return "too slow to play on this board: \(why)"
        }
    }

    public var description: String { "\(file): \(reasonText)" }
}
