import TureenCore

/// RFC 3339 date-times (the ISO 8601 profile servers write, such as
/// Salesforce's LastModifiedDate "2026-11-24T10:15:30.123Z" or
/// "2026-11-24T10:15:30.000+0000"), read here because the library may not
/// use Foundation.
enum DateTimeText {
    /// The epoch milliseconds `text` names, or nil when it is not one
    /// complete date-time with its zone: YYYY-MM-DD, "T" (or "t", or a space
    /// as RFC 3339 allows), HH:MM:SS, an optional fraction, then "Z" or an
    /// offset (+HH:MM, +HHMM or +HH). A time without a zone is refused: which
    /// instant it names depends on where the server is. Digits past the
    /// millisecond are dropped, so ordering is by millisecond.
    static func epochMs(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        var i = 0
        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        func number(_ width: Int) -> Int64? {
            guard i + width <= b.count else { return nil }
            var v: Int64 = 0
            for c in b[i..<(i + width)] {
                guard isDigit(c) else { return nil }
                v = v * 10 + Int64(c - 0x30)
            }
            i += width
            return v
        }
        func skip(_ c: Character) -> Bool {
            guard i < b.count, let a = c.asciiValue, b[i] == a else { return false }
            i += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
              skip("T") || skip("t") || skip(" "),
              let hour = number(2), skip(":"), let minute = number(2), skip(":"), let second = number(2) else { return nil }
        var ms: Int64 = 0
        if skip(".") {
            var n = 0
            while i < b.count, isDigit(b[i]) {
                if n < 3 { ms = ms * 10 + Int64(b[i] - 0x30) }
                n += 1
                i += 1
            }
            guard n > 0 else { return nil }
            while n < 3 { ms *= 10; n += 1 }
        }
        var offsetMinutes: Int64 = 0
        if skip("Z") || skip("z") {
            // UTC
        } else if i < b.count, b[i] == 0x2B || b[i] == 0x2D {
            let sign: Int64 = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let h = number(2) else { return nil }
            var m: Int64 = 0
            if i < b.count {
                _ = skip(":")
                guard let mm = number(2) else { return nil }
                m = mm
            }
            guard h <= 23, m <= 59 else { return nil }
            offsetMinutes = sign * (h * 60 + m)
        } else {
            return nil
        }
        // A leap second (:60) is allowed by RFC 3339; it orders as the next
        // minute's first second, which is where it belongs.
        guard i == b.count, month >= 1, month <= 12, day >= 1, day <= daysIn(month, of: year),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        let minutes = (daysSinceEpoch(year, month, day) * 24 + hour) * 60 + minute - offsetMinutes
        return (minutes * 60 + second) * 1000 + ms
    }

    /// The epoch milliseconds of an HTTP-date in RFC 9110's preferred form
    /// (IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"), which Retry-After
    /// may carry instead of seconds; nil for anything else.
    static func httpDateEpochMs(_ text: String) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              parts[1].utf8.count == 2, let day = Int64(parts[1]),
              let m = months.firstIndex(where: { parts[2] == $0 }),
              parts[3].utf8.count == 4, let year = Int64(parts[3]) else { return nil }
        let time = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, time.allSatisfy({ $0.utf8.count == 2 }),
              let hour = Int64(time[0]), let minute = Int64(time[1]), let second = Int64(time[2]),
              day >= 1, day <= daysIn(Int64(m + 1), of: year), hour <= 23, minute <= 59, second <= 60 else { return nil }
        return (((daysSinceEpoch(year, Int64(m + 1), day) * 24 + hour) * 60 + minute) * 60 + second) * 1000
    }

    private static func daysIn(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
    /// days_from_civil: years counted from March, so the leap day comes last).
    private static func daysSinceEpoch(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
