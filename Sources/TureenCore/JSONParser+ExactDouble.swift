extension JSONParser {
    /// The number written in `base[start..<end]` (already checked against
    /// JSON's grammar) when it is short enough to convert with one exact
    /// operation, else nil. A decimal of at most 15 digits is an integer
    /// below 2^53 times a power of ten; when that power is at most 10^22
    /// both are exact doubles, and one multiplication or division rounds
    /// the product correctly, as strtod would (Clinger's fast path). It
    /// spares a String of the text and a strtod for the usual 12.5 or
    /// 3.25e2, some 700 instructions each.
    func exactDouble(_ start: Int, _ end: Int) -> Double? {
        let b = base!
        var at = start
        let negative = b[at] == UInt8(ascii: "-")
        if negative { at += 1 }
        var digits: UInt64 = 0
        var count = 0
        var fraction = 0
        var inFraction = false
        while at < end {
            let c = b[at]
            if c == UInt8(ascii: ".") {
                inFraction = true
            } else if c >= 0x30 && c <= 0x39 {
                count += 1
                if count > 15 { return nil }
                digits = digits &* 10 &+ UInt64(c &- 0x30)
                if inFraction { fraction += 1 }
            } else {
                break  // "e" or "E"
            }
            at += 1
        }
        var exponent = 0
        if at < end {
            at += 1
            var exponentNegative = false
            if b[at] == UInt8(ascii: "-") || b[at] == UInt8(ascii: "+") {
                exponentNegative = b[at] == UInt8(ascii: "-")
                at += 1
            }
            while at < end {
                exponent = exponent &* 10 &+ Int(b[at] &- 0x30)
                if exponent > 100 { return nil }
                at += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        let power = exponent - fraction
        guard power >= -22 && power <= 22 else { return nil }
        var scale = 1.0
        for _ in 0..<(power < 0 ? -power : power) { scale *= 10 }  // 10^k, k <= 22: every step exact
        let magnitude = power < 0 ? Double(digits) / scale : Double(digits) * scale
        return negative ? -magnitude : magnitude
    }
}
