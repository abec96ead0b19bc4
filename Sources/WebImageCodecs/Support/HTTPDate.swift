package import Foundation

/// HTTP dates (RFC 9110 5.6.7) in the preferred IMF-fixdate form: `Sun, 06 Nov 1994 08:49:37 GMT`.
package enum HTTPDate {
    /// The date, or nil when the text is not an IMF-fixdate.
    package static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
