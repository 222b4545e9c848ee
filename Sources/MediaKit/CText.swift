extension String {
    /// The text a C function wrote into `buffer`, up to its first NUL (all of it when there is
    /// none), read as UTF-8 with bad bytes replaced.
    public init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Language tags (`en`, `en-US`, `de_DE`) compared by their primary subtag.
public enum LanguageTag {
    /// `en` of `en-US`, `en_GB` or `EN`; nil for nothing.
    public static func primary(_ tag: String?) -> String? {
        guard let tag, !tag.isEmpty else { return nil }
        return String(tag.lowercased().prefix { $0 != "-" && $0 != "_" })
    }
}
