/// How a capture date is written in a caption, by language. FoundationEssentials has no locale data, and a frame
/// needs only day, month and year, so the common languages' month names and word order are kept here.
public enum DateStyle: String, Sendable, CaseIterable {
    /// `2026-11-29`
    case iso
    /// `29 November 2026`
    case english = "en"
    /// `November 29, 2026`
    case americanEnglish = "en-US"
    case german = "de"
    case french = "fr"
    case spanish = "es"
    case italian = "it"
    case dutch = "nl"
    case portuguese = "pt"
    case swedish = "sv"
    case danish = "da"
    case norwegian = "nb"
    case polish = "pl"
    case finnish = "fi"

    private var months: [String] {
        switch self {
        case .iso, .english, .americanEnglish:
            return [
                "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December",
            ]
        case .german:
            return [
                "Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
                "November", "Dezember",
            ]
        case .french:
            return [
                "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
                "novembre", "décembre",
            ]
        case .spanish:
            return [
                "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
                "noviembre", "diciembre",
            ]
        case .italian:
            return [
                "gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
                "ottobre", "novembre", "dicembre",
            ]
        case .dutch:
            return [
                "januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober",
                "november", "december",
            ]
        case .portuguese:
            return [
                "janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
                "novembro", "dezembro",
            ]
        case .swedish:
            return [
                "januari", "februari", "mars", "april", "maj", "juni", "juli", "augusti", "september", "oktober",
                "november", "december",
            ]
        case .danish:
            return [
                "januar", "februar", "marts", "april", "maj", "juni", "juli", "august", "september", "oktober",
                "november", "december",
            ]
        case .norwegian:
            return [
                "januar", "februar", "mars", "april", "mai", "juni", "juli", "august", "september", "oktober",
                "november", "desember",
            ]
        case .polish:
            // Polish dates take the month in the genitive.
            return [
                "stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września",
                "października", "listopada", "grudnia",
            ]
        case .finnish:
            return [
                "tammikuuta", "helmikuuta", "maaliskuuta", "huhtikuuta", "toukokuuta", "kesäkuuta", "heinäkuuta",
                "elokuuta", "syyskuuta", "lokakuuta", "marraskuuta", "joulukuuta",
            ]
        }
    }

    /// The date part of an EXIF `YYYY:MM:DD HH:MM:SS`, written the language's way; nil when it is not a date
    /// (cameras with an unset clock write `0000:00:00 00:00:00`).
    public func format(exifDate: String) -> String? {
        let fields = exifDate.split(whereSeparator: { $0 == ":" || $0 == " " }).prefix(3).compactMap { Int($0) }
        guard fields.count == 3, (1800...9999).contains(fields[0]), (1...12).contains(fields[1]),
            (1...31).contains(fields[2])
        else { return nil }
        let (year, month, day) = (fields[0], fields[1], fields[2])
        let name = months[month - 1]
        switch self {
        case .iso:
            let pad = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
            return "\(year)-\(pad(month))-\(pad(day))"
        case .americanEnglish: return "\(name) \(day), \(year)"
        case .german, .danish, .norwegian, .finnish: return "\(day). \(name) \(year)"
        case .spanish, .portuguese: return "\(day) de \(name) de \(year)"
        case .english, .french, .italian, .dutch, .swedish, .polish: return "\(day) \(name) \(year)"
        }
    }

    /// The style for a POSIX locale name (`de_DE.UTF-8`, `en_US`, `C`): the full name first, then its language;
    /// English when the locale is not one of these.
    public static func fromEnvironment(_ name: String?) -> DateStyle {
        guard let name, !name.isEmpty, name != "C", name != "POSIX", !name.hasPrefix("C.") else { return .english }
        let base = name.split(separator: ".").first.map(String.init) ?? name
        let tag = base.replacing("_", with: "-")
        if let exact = DateStyle(rawValue: tag) { return exact }
        let language = tag.split(separator: "-").first.map(String.init) ?? tag
        if language == "no" || language == "nn" { return .norwegian }
        return DateStyle(rawValue: language) ?? .english
    }
}
