/// Splits a line into words the way a POSIX shell does, without expanding anything: blanks
/// separate words, single quotes keep everything literally, double quotes group words and let a
/// backslash escape `"`, `\`, `$` and `` ` ``, and a backslash outside quotes escapes any one
/// character. The quotes themselves are removed.
///
/// The REPL reads every command line with it, and `player.command` is split by it, so
/// `config player.command "mpv --ao=null"` stores `mpv --ao=null`, and a title with spaces can be
/// written as `"my list"` or `my\ list`.
public enum ShellWords {
    public struct SplitError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public static func split(_ line: String) -> Result<[String], SplitError> {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n", "\r":
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" { closed = true; break }
                    current.append(next)
                }
                guard closed else { return .failure(SplitError(description: "a single quote (') is not closed")) }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { break }
                        if !["\"", "\\", "$", "`", "\n"].contains(escaped) { current.append("\\") }
                        if escaped != "\n" { current.append(escaped) }
                        continue
                    }
                    current.append(next)
                }
                guard closed else { return .failure(SplitError(description: "a double quote (\") is not closed")) }
            case "\\":
                inWord = true
                guard let escaped = iterator.next() else {
                    return .failure(SplitError(description: "the line ends with a lone backslash (\\)"))
                }
                if escaped != "\n" { current.append(escaped) }
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return .success(words)
    }

    /// Quotes a word so that `split` gives it back unchanged.
    public static func quote(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy { scalar in
                scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                    || "-_./:=@%+,#".unicodeScalars.contains(scalar)
            }
        if plain { return word }
        return "'" + word.replacing("'", with: #"'\''"#) + "'"
    }
}
