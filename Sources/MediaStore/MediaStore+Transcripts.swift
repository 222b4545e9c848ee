import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit

extension MediaStore {
    /// About this many characters of consecutive cues make one searchable passage: a phrase cut
    /// by a cue's end is still found, and a hit still says where, to within a few seconds.
    static let passageLength = 320
    /// A passage spans at most this many seconds, and a pause this long starts a new one: a hit
    /// is then where the words were said, give or take a few seconds.
    static let passageSpan = 20.0
    static let passagePause = 5.0

    /// Keeps `cues` as the transcript of `id` (replacing one kept before), in passages that
    /// full-text search reads. The oldest transcripts go when more than `limit` are kept.
    public func keepTranscript(
        _ id: ItemID, title: String, show: String?, format: String, cues: [TranscriptCue], limit: Int = 5000,
        at date: Date = Date()
    ) async throws {
        let encoded = try JSONEncoder().encode(cues)
        try await write(roomy: cues.count > 2000) { db in
            // A transcript's passages are rows firstRow...lastRow of the search table (written
            // in one go): found by rowid, not by a scan of every passage kept.
            func forget(where condition: String, _ arguments: StatementArguments) throws {
                let ranges = try Row.fetchAll(
                    db, sql: "SELECT firstRow, lastRow FROM transcript WHERE \(condition)", arguments: arguments)
                for range in ranges {
                    guard let first = range[0] as Int64?, let last = range[1] as Int64? else { continue }
                    try db.execute(sql: "DELETE FROM transcriptText WHERE rowid BETWEEN ? AND ?", arguments: [first, last])
                }
                try db.execute(sql: "DELETE FROM transcript WHERE \(condition)", arguments: arguments)
            }
            try forget(where: "id = ?", [id.description])
            let before = try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM transcriptText") ?? 0
            let insert = try db.makeStatement(
                sql: "INSERT INTO transcriptText (text, item, start, speaker) VALUES (?, ?, ?, ?)")
            var passage = ""
            var start = 0.0
            var speaker: String?
            func flush() throws {
                guard !passage.isEmpty else { return }
                try insert.execute(arguments: [passage, id.description, start, speaker])
                passage = ""
            }
            var lastStart = 0.0
            for cue in cues {
                if !passage.isEmpty,
                    passage.count + cue.text.count > Self.passageLength || cue.speaker != speaker
                        || cue.start - start > Self.passageSpan || cue.start - lastStart > Self.passagePause
                {
                    try flush()
                }
                lastStart = cue.start
                if passage.isEmpty {
                    start = cue.start
                    speaker = cue.speaker
                }
                passage += (passage.isEmpty ? "" : " ") + cue.text
            }
            try flush()
            let last = db.lastInsertedRowID
            let first = try Int64.fetchOne(db, sql: "SELECT min(rowid) FROM transcriptText WHERE rowid > ?", arguments: [before])
            try db.execute(
                sql: """
                    INSERT INTO transcript (id, provider, title, show, format, fetchedAt, cues, firstRow, lastRow)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id.description, id.provider, title, show, format, date.timeIntervalSince1970, encoded, first,
                    first == nil ? nil : last,
                ])
            // Bounded like the other caches: the least recently fetched go first.
            try forget(where: "id IN (SELECT id FROM transcript ORDER BY fetchedAt DESC LIMIT -1 OFFSET ?)", [limit])
        }
    }

    /// The transcript kept for `id`: its format and cues, or nil.
    public func transcript(_ id: ItemID) async throws -> (format: String, cues: [TranscriptCue])? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT format, cues FROM transcript WHERE id = ?", arguments: [id.description])
            else { return nil }
            let data: Data = try row[1]
            return (try row[0], try JSONDecoder().decode([TranscriptCue].self, from: data))
        }
    }

    /// How many transcripts are kept.
    public func transcriptCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM transcript") ?? 0 }
    }

    /// The passages that have all of `words` (a word ending in `*` is a prefix; "quoted words" a
    /// phrase), best first.
    public func searchTranscripts(_ words: String, limit: Int = 20) async throws -> [TranscriptHit] {
        guard let query = Self.ftsQuery(words) else { return [] }
        return try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT t.item, x.title, x.show, t.start, t.speaker,
                        snippet(transcriptText, 0, '[', ']', '…', 24), bm25(transcriptText) AS rank
                    FROM transcriptText t JOIN transcript x ON x.id = t.item
                    WHERE transcriptText MATCH ? ORDER BY rank LIMIT ?
                    """, arguments: [query, limit])
            return try rows.compactMap { row in
                guard let id = try? ItemID(parsing: row[0] as String) else { return nil }
                return TranscriptHit(
                    id: id, title: try row[1], show: try row[2], start: try row[3], speaker: try row[4], text: try row[5],
                    score: -(try row[6] as Double))
            }
        }
    }

    /// What a person typed, as an FTS5 query: each word a quoted term (so no word is read as an
    /// operator), a trailing `*` kept as a prefix, "quoted words" kept as a phrase; all must match.
    /// The most words and bytes a transcript search takes (FTS5's time grows worse than the
    /// square of the terms: 2,000 of one word took 22 s).
    public static let maxSearchWords = 32
    public static let maxSearchBytes = 1_000

    static func ftsQuery(_ text: String) -> String? {
        var terms: [String] = []
        var phrase: String?
        // A NUL would end the bound text inside a quoted term (SQLite reads a bound string up
        // to it), leaving the term unterminated: it separates words, as a space does.
        let text = text.replacing("\u{0}", with: " ")
        for piece in text.split(separator: " ", omittingEmptySubsequences: true) {
            var word = String(piece)
            if phrase == nil, word.hasPrefix("\""), word.count > 1 || word == "\"" {
                word.removeFirst()
                if word.hasSuffix("\""), !word.isEmpty {
                    word.removeLast()
                    if !word.isEmpty { terms.append(quoted(word)) }
                } else {
                    phrase = word
                }
                continue
            }
            if var open = phrase {
                if word.hasSuffix("\"") {
                    open += " " + word.dropLast()
                    terms.append(quoted(open.trimming(.whitespaces)))
                    phrase = nil
                } else {
                    phrase = open + " " + word
                }
                continue
            }
            let prefix = word.hasSuffix("*") && word.count > 1
            if prefix { word.removeLast() }
            word = word.filter { !"\"()^:*".contains($0) }
            guard !word.isEmpty else { continue }
            terms.append(quoted(word) + (prefix ? "*" : ""))
        }
        if let phrase, !phrase.isEmpty { terms.append(quoted(phrase)) }
        // All must match: a term said twice asks nothing more.
        var seen = Set<String>()
        terms = terms.filter { seen.insert($0.lowercased()).inserted }
        return terms.isEmpty ? nil : terms.joined(separator: " ")
    }

    private static func quoted(_ text: String) -> String { "\"" + text.replacing("\"", with: "\"\"") + "\"" }
}
