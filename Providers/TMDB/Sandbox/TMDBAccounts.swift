import Foundation
import Hummingbird
import NIOCore
import Sandbox
import Synchronization

/// TMDB's v3 user authentication (request token -> validate_with_login -> session -> account)
/// with test users, and each account's favorite movies.
public final class TMDBAccounts: Sendable {
    /// The sandbox's users: username -> password.
    public static let users = ["sandbox": "sandbox", "ada": "lovelace"]

    struct State {
        var tokenLifetime: Double = 3600
        var tokens: [String: (expires: Date, user: String?)] = [:]
        var sessions: [String: String] = [:]
        /// Sessions of an earlier run deleted in this one.
        var ended: Set<String> = []
        /// Every session this run made: only others are an earlier run's.
        var issued: Set<String> = []
        var favorites: [String: [Int]] = [:]
    }
    let state = Mutex(State())

    /// How long request tokens live (tests make them expire).
    public var tokenLifetime: Double {
        get { state.withLock { $0.tokenLifetime } }
        set { state.withLock { $0.tokenLifetime = newValue } }
    }

    public func favorites(of user: String) -> [Int] { state.withLock { $0.favorites[user] ?? [] } }

    static func accountID(_ user: String) -> Int { user == "sandbox" ? 21_000_001 : 21_000_002 }

    func register(_ api: SandboxRoutes, catalogue: TMDBCatalogue, replica: TMDBReplica) {
        api.get("authentication/token/new") { request, _ in
            try replica.authorized(request) {
                let token = "rt_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                let expires = self.state.withLock { state -> Date in
                    let expires = Date().addingTimeInterval(state.tokenLifetime)
                    state.tokens[token] = (expires, nil)
                    return expires
                }
                return TMDBReplica.json(["success": true, "expires_at": Self.utc(expires), "request_token": token])
            }
        }
        api.post("authentication/token/validate_with_login") { request, context in
            struct Login: Decodable { var username: String?; var password: String?; var request_token: String? }
            let body = try await request.decode(as: Login.self, context: context)
            return try replica.authorized(request) {
                let outcome: Response = self.state.withLock { state in
                    guard let token = body.request_token, let entry = state.tokens[token], entry.expires > Date() else {
                        return TMDBReplica.json(
                            [
                                "success": false, "status_code": 33,
                                "status_message": "Invalid request token: The request token is either expired or invalid.",
                            ], status: .unauthorized)
                    }
                    guard let user = body.username, Self.users[user] == body.password else {
                        return TMDBReplica.json(
                            [
                                "success": false, "status_code": 30,
                                "status_message": "Invalid username and/or password: You did not provide a valid login.",
                            ], status: .unauthorized)
                    }
                    state.tokens[token] = (entry.expires, user)
                    return TMDBReplica.json(["success": true, "expires_at": Self.utc(entry.expires), "request_token": token])
                }
                return outcome
            }
        }
        api.post("authentication/session/new") { request, context in
            struct New: Decodable { var request_token: String? }
            let body = try await request.decode(as: New.self, context: context)
            return try replica.authorized(request) {
                self.state.withLock { state in
                    guard let token = body.request_token, let entry = state.tokens[token], let user = entry.user,
                        entry.expires > Date()
                    else {
                        return TMDBReplica.json(
                            ["success": false, "status_code": 17, "status_message": "Session denied."], status: .unauthorized)
                    }
                    state.tokens[token] = nil
                    let session = Self.newSession(for: user)
                    state.sessions[session] = user
                    state.issued.insert(session)
                    return TMDBReplica.json(["success": true, "session_id": session])
                }
            }
        }
        api.delete("authentication/session") { request, context in
            struct Delete: Decodable { var session_id: String? }
            let body = try await request.decode(as: Delete.self, context: context)
            return try replica.authorized(request) {
                let known = self.state.withLock { state in
                    let id = body.session_id ?? ""
                    let known = state.sessions.removeValue(forKey: id) != nil || Self.earlierUser(id) != nil
                    state.ended.insert(id)
                    return known
                }
                return known
                    ? TMDBReplica.json(["success": true])
                    : TMDBReplica.json(
                        [
                            "success": false, "status_code": 6,
                            "status_message": "Invalid id: The pre-requisite id is invalid or not found.",
                        ], status: .notFound)
            }
        }
        api.get("account") { request, _ in
            try replica.authorized(request) {
                guard let user = self.user(request) else { return Self.sessionDenied() }
                return TMDBReplica.json([
                    "id": Self.accountID(user), "username": user, "name": user == "ada" ? "Ada Lovelace" : "Sandbox User",
                    "include_adult": false, "iso_639_1": "en", "iso_3166_1": "US",
                ])
            }
        }
        api.post("account/:account/favorite") { request, context in
            struct Mark: Decodable { var media_type: String?; var media_id: Int?; var favorite: Bool? }
            let body = try await request.decode(as: Mark.self, context: context)
            let account = context.parameters.get("account", as: Int.self)
            return try replica.authorized(request) {
                guard let user = self.user(request), account == Self.accountID(user) else { return Self.sessionDenied() }
                guard body.media_type == "movie", let id = body.media_id, catalogue.movie(id) != nil else {
                    return TMDBReplica.notFound()
                }
                let favorite = body.favorite ?? false
                self.state.withLock { state in
                    var list = state.favorites[user] ?? []
                    list.removeAll { $0 == id }
                    if favorite { list.insert(id, at: 0) }
                    state.favorites[user] = list
                }
                return favorite
                    ? TMDBReplica.json(["success": true, "status_code": 1, "status_message": "Success."], status: .created)
                    : TMDBReplica.json([
                        "success": true, "status_code": 13, "status_message": "The item/record was deleted successfully.",
                    ])
            }
        }
        api.get("account/:account/favorite/movies") { request, context in
            let account = context.parameters.get("account", as: Int.self)
            return try replica.authorized(request) {
                guard let user = self.user(request), account == Self.accountID(user) else { return Self.sessionDenied() }
                return replica.page(self.favorites(of: user).compactMap(catalogue.movie), request)
            }
        }
    }

    private func user(_ request: Request) -> String? {
        guard let value = request.uri.queryParameters.get("session_id") else { return nil }
        let session = String(value)
        return state.withLock { state in
            state.sessions[session]
                ?? (state.ended.contains(session) || state.issued.contains(session) ? nil : Self.earlierUser(session))
        }
    }

    /// A session id naming its user, so a sandbox restarted on the same port still takes the
    /// session a login in its data dir kept (`earlierUser`).
    static func newSession(for user: String) -> String {
        let user = Array(user.utf8).map { String($0, radix: 16) }.joined()
        return "sbx\(user)x" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// The user of a session of an earlier run.
    static func earlierUser(_ session: String) -> String? {
        guard session.hasPrefix("sbx") else { return nil }
        let hex = Array(session.dropFirst(3).prefix { $0 != "x" })
        guard hex.count % 2 == 0, !hex.isEmpty else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(hex[index...index + 1]), radix: 16) else { return nil }
            bytes.append(byte)
        }
        let user = String(decoding: bytes, as: UTF8.self)
        return users[user] == nil ? nil : user
    }

    static func sessionDenied() -> Response {
        TMDBReplica.json(
            [
                "success": false, "status_code": 3,
                "status_message": "Authentication failed: You do not have permissions to access the service.",
            ], status: .unauthorized)
    }

    static func utc(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }
}
