package import Foundation

/// HTTP dates (RFC 9110 5.6.7) in the preferred IMF-fixdate form: `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// Parsed by hand: every stored download's `Date` header goes through here, and making a
/// `DateFormatter` for each cost more than the rest of storing the entry's metadata.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date, or nil when the text is not an IMF-fixdate.
    package static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT",
            let day = Int(fields[1]), (1...31).contains(day),
            let month = months.firstIndex(of: fields[2].lowercased()),
            let year = Int(fields[3]), fields[3].count == 4
        else { return nil }
        let time = fields[4].split(separator: ":")
        guard time.count == 3, let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
