extension MediaStore {
    /// Settings made with `config.set`, by key.
    public func settings() async throws -> [String: String] {
        try await pool.read(Self.fetchSettings)
    }

    /// Reads settings synchronously, for start-up before any task runs.
    public func settingsNow() throws -> [String: String] {
        try pool.read(Self.fetchSettings)
    }

    private static func fetchSettings(_ db: Database) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM setting") { result[try row[0]] = try row[1] as String }
        return result
    }

    /// Stores a setting, or removes it when `value` is nil.
    public func setSetting(_ key: String, value: String?) async throws {
        try await pool.write { db in
            if let value {
                try db.execute(
                    sql: "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    arguments: [key, value])
            } else {
                try db.execute(sql: "DELETE FROM setting WHERE key = ?", arguments: [key])
            }
        }
    }

    /// Removes a setting synchronously, for start-up (moving a secret out of the database).
    public func deleteSettingNow(_ key: String) throws {
        try pool.write { db in try db.execute(sql: "DELETE FROM setting WHERE key = ?", arguments: [key]) }
    }
}
