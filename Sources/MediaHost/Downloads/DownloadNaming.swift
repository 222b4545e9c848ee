import Basics
import FoundationEssentials
import Glibc

/// File names for downloads. Names come from feeds and APIs, so they are sanitized: no path
/// separators, no "..", no control characters, bounded length; collisions are numbered, and
/// nothing can land outside the downloads folder.
enum DownloadNaming {
    static let maxComponentBytes = 120

    /// One safe path component made from outside text.
    static func component(_ text: String, fallback: String, maxBytes: Int = maxComponentBytes) -> String {
        var scalars = String.UnicodeScalarView()
        var lastWasSpace = false
        // "Episode 3: Title" reads best as "Episode 3 - Title" where ':' is not allowed.
        for scalar in text.replacing(": ", with: " - ").unicodeScalars {
            let category = scalar.properties.generalCategory
            var replacement: Unicode.Scalar? = scalar
            if scalar == "/" || scalar == "\\" || scalar == ":" {
                replacement = "-"
            } else if category == .control || category == .format || category == .lineSeparator || category == .paragraphSeparator
                || scalar.properties.isNoncharacterCodePoint || scalar == "\u{FFFD}"
            {
                replacement = " "
            } else if scalar.properties.isWhitespace {
                replacement = " "
            }
            guard let replacement else { continue }
            if replacement == " " {
                if lastWasSpace { continue }
                lastWasSpace = true
            } else {
                lastWasSpace = false
            }
            scalars.append(replacement)
        }
        var name = String(scalars)
        // No ".." anywhere, even where it could no longer climb out.
        while name.contains("..") { name = name.replacing("..", with: ".") }
        // Leading dots would hide the file or make "." and ".."; trailing dots and spaces trouble other systems.
        while let first = name.first, first == "." || first == " " || first == "-" { name.removeFirst() }
        while let last = name.last, last == "." || last == " " { name.removeLast() }
        if name.utf8.count > maxBytes {
            var cut = ""
            for character in name {
                if cut.utf8.count + String(character).utf8.count > maxBytes { break }
                cut.append(character)
            }
            name = cut
            while let last = name.last, last == "." || last == " " { name.removeLast() }
        }
        return name.isEmpty ? fallback : name
    }

    /// A file extension: letters and digits only, at most 8.
    static func fileExtension(_ text: String?) -> String? {
        guard let text else { return nil }
        let cleaned = String(
            text.lowercased().unicodeScalars.filter { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") }.prefix(8))
        return cleaned.isEmpty ? nil : String(cleaned)
    }

    /// `<root>/<provider>/<collection>/<name>.<ext>`, numbered " (2)", " (3)"... when `taken`.
    /// - Throws: when the result would leave `root` (it cannot, but the check stays).
    static func path(
        root: String, provider: String, collection: String?, name: String, fileExtension: String?,
        taken: (String) async throws -> Bool
    ) async throws -> String {
        let folder = root + "/" + component(provider, fallback: "provider") + "/" + component(collection ?? "", fallback: "Other")
        let base = component(name, fallback: "download", maxBytes: maxComponentBytes - 16)
        let suffix = self.fileExtension(fileExtension).map { "." + $0 } ?? ""
        for number in 1...10_000 {
            let candidate = folder + "/" + (number == 1 ? base : "\(base) (\(number))") + suffix
            if try await !taken(candidate) {
                let standardized = URL(fileURLWithPath: candidate).standardizedFileURL.path
                guard standardized.hasPrefix(URL(fileURLWithPath: root).standardizedFileURL.path + "/") else {
                    throw HostError.invalidArgument("refusing to write outside the downloads folder: \(candidate)")
                }
                return candidate
            }
        }
        throw HostError.invalidArgument("too many downloads named \(base)")
    }
}
