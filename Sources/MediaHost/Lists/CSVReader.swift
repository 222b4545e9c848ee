/// One row of a CSV file: its fields, and the line it starts on (for a message about it).
struct CSVRow: Equatable {
    var line: Int
    var fields: [String]
}

/// Reads CSV as RFC 4180 describes it and as apps and spreadsheets write it besides: a field in
/// double quotes may hold commas, line breaks and `""` for a quote; rows end with CRLF, LF or CR;
/// a UTF-8 byte order mark may lead (spreadsheets save one), and the last row may have no line
/// break after it. A quote inside an unquoted field is kept as it is.
enum CSVReader {
    /// The rows of `bytes`, blank lines left out.
    static func rows(_ bytes: [UInt8]) -> [CSVRow] {
        var rows: [CSVRow] = []
        forEachRow(bytes) { row in
            rows.append(row)
            return true
        }
        return rows
    }

    /// Each row of `bytes` in turn, blank lines left out, until `body` says false: a file of a
    /// million rows is read a row at a time, not held whole.
    static func forEachRow(_ bytes: [UInt8], _ body: (CSVRow) throws -> Bool) rethrows {
        let quote: UInt8 = 0x22
        let comma: UInt8 = 0x2C
        let lineFeed: UInt8 = 0x0A
        let carriageReturn: UInt8 = 0x0D
        var fields: [String] = []
        var going = true
        var field: [UInt8] = []
        var quoted = false
        // Whether the field began with a quote: `"a"` is a field, `a"b` is the three characters.
        var fieldStarted = false
        var line = 1
        var rowLine = 1

        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            fieldStarted = false
        }
        func endRow() throws {
            endField()
            if fields.count > 1 || fields.first?.isEmpty == false { going = try body(CSVRow(line: rowLine, fields: fields)) }
            fields.removeAll(keepingCapacity: true)
        }

        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while going, index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == quote {
                    if index < bytes.count, bytes[index] == quote {
                        field.append(quote)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    // A line break inside quotes is part of the field, and still a line of the file.
                    if byte == lineFeed || (byte == carriageReturn && (index == bytes.count || bytes[index] != lineFeed)) {
                        line += 1
                    }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case quote where !fieldStarted && field.isEmpty:
                quoted = true
                fieldStarted = true
            case comma:
                endField()
            case carriageReturn, lineFeed:
                if byte == carriageReturn, index < bytes.count, bytes[index] == lineFeed { index += 1 }
                try endRow()
                line += 1
                rowLine = line
            default:
                field.append(byte)
                fieldStarted = true
            }
        }
        if going, fieldStarted || !field.isEmpty || !fields.isEmpty { try endRow() }
    }
}
