/// EXIF dates (`YYYY:MM:DD HH:MM:SS`, no time zone) as seconds since 1970, for ordering photos by when they were
/// taken. The zone is unknown, so the value is only good for comparing.
public enum CaptureDate {
    public static func seconds(fromEXIF text: String) -> Double? {
        let digits = text.split(whereSeparator: { $0 == ":" || $0 == " " }).compactMap { Int($0) }
        guard digits.count == 6 else { return nil }
        let (year, month, day) = (digits[0], digits[1], digits[2])
        guard (1800...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
            (0...23).contains(digits[3]), (0...59).contains(digits[4]), (0...60).contains(digits[5])
        else { return nil }
        let days = CivilDate.daysSince1970(year: year, month: month, day: day)
        return Double(days * 86400 + digits[3] * 3600 + digits[4] * 60 + digits[5])
    }
}
