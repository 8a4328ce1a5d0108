/// The line of text drawn over each photo: what it says, where, how large, and how dates are written.
public struct CaptionStyle: Sendable, Equatable {
    public enum Content: String, Sendable, CaseIterable {
        case none, date, name
        case dateAndName = "date+name"
    }

    public enum Position: String, Sendable, CaseIterable {
        case topLeft = "top-left"
        case topCenter = "top-center"
        case topRight = "top-right"
        case bottomLeft = "bottom-left"
        case bottomCenter = "bottom-center"
        case bottomRight = "bottom-right"
    }

    public var content: Content
    public var position: Position
    /// Text height as a fraction of the picture's shorter side.
    public var size: Double
    public var locale: DateStyle

    public init(
        content: Content = .none, position: Position = .bottomRight, size: Double = 0.045,
        locale: DateStyle = .english
    ) {
        self.content = content
        self.position = position
        self.size = size
        self.locale = locale
    }

    /// The caption of one photo, or nil when there is nothing to say (no date in a photo asked to show only one).
    /// `name` is the slide name; a folder prefix and a rendition suffix are not part of what the viewer reads.
    public func text(name: String, exifDate: String?) -> String? {
        let shortName = name.split(separator: "/").last.map(String.init) ?? name
        let date = exifDate.flatMap { locale.format(exifDate: $0) }
        switch content {
        case .none: return nil
        case .name: return shortName
        case .date: return date
        case .dateAndName: return date.map { "\($0) · \(shortName)" } ?? shortName
        }
    }
}
