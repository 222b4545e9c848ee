import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// Login with an app password, the session kept by the host and refreshed here, and likes as
/// the account's favorites.
extension BlueskyProvider: AccountProvider {
    public var accountFavoriteKinds: [MediaKind] { [.post] }

    /// Logs in with a handle (or the account's e-mail or DID) and an app password, on the server
    /// that holds the account: its DID document's PDS, else the `service` setting.
    public func login(_ credentials: LoginCredentials, prompt: @escaping @Sendable (AuthPrompt) async -> Void) async throws
        -> AuthSession
    {
        let identifier = Self.actor(credentials.username?.trimming(.whitespaces) ?? "")
        guard !identifier.isEmpty, let password = credentials.password, !password.isEmpty else {
            throw ProviderError.invalidArgument("Bluesky login needs your handle and an app password")
        }
        guard Self.isAppPassword(password) else {
            throw ProviderError.invalidArgument(
                "that is not an app password: make one in Bluesky under Settings > Privacy and security > App passwords "
                    + "(it looks like xxxx-xxxx-xxxx-xxxx); mediahost never takes your account password")
        }
        var server = service
        if !identifier.contains("@") {
            do {
                let did = identifier.hasPrefix("did:") ? identifier : try await resolve(handle: identifier)
                if let pds = try await document(did).pds.flatMap(Self.serverURL) { server = pds }
            } catch {
                logger.notice("bluesky: cannot find @\(identifier)'s server (\(error)); logging in at \(service)")
            }
        }
        let created: BSession = try await send(
            "POST", "com.atproto.server.createSession", body: ["identifier": identifier, "password": password], to: server,
            token: nil)
        return try session(from: created, server: server)
    }

    public func refresh(_ session: AuthSession) async throws -> AuthSession {
        guard let refreshToken = session.refreshToken else { throw Self.loginAgain }
        let fresh: BSession
        do {
            fresh = try await send("POST", "com.atproto.server.refreshSession", to: try pds(session), token: refreshToken)
        } catch is SessionExpired {
            throw Self.loginAgain
        } catch ProviderError.unauthorized, ProviderError.invalidArgument {
            throw Self.loginAgain
        }
        var renewed = try self.session(from: fresh, server: try pds(session))
        // A refresh carries no DID document: the server stays the one found at login.
        renewed.values["pds"] = session.values["pds"] ?? renewed.values["pds"]
        return renewed
    }

    public func logout(_ session: AuthSession) async throws {
        guard let refreshToken = session.refreshToken else { return }
        let _: Empty = try await send("POST", "com.atproto.server.deleteSession", to: try pds(session), token: refreshToken)
    }

    /// Likes or unlikes a post (a like record in the account's repository).
    public func setAccountFavorite(_ id: ItemID, _ favorite: Bool, session: AuthSession) async throws {
        guard id.kind == .post else { throw ProviderError.unsupported("only posts can be liked on Bluesky") }
        let did = try self.did(session)
        let uri = try await postURI(id.nativeID)
        let page: BPostsPage = try await authorized(session) { server, token in
            try await send("GET", "app.bsky.feed.getPosts", ["uris": uri], to: server, token: token)
        }
        guard let post = page.posts?.first, let cid = post.cid else {
            throw ProviderError.notFound("no Bluesky post \(id.nativeID) to like: deleted, or hidden by a block")
        }
        if favorite {
            guard post.viewer?.like == nil else { return }
            let record: [String: Any] = [
                "$type": "app.bsky.feed.like", "subject": ["uri": uri, "cid": cid], "createdAt": ISODate.string(from: now()),
            ]
            let _: BCreated = try await authorized(session) { server, token in
                try await send(
                    "POST", "com.atproto.repo.createRecord",
                    body: ["repo": did, "collection": "app.bsky.feed.like", "record": record], to: server, token: token)
            }
        } else {
            guard let like = post.viewer?.like, let rkey = like.split(separator: "/").last else { return }
            let _: Empty = try await authorized(session) { server, token in
                try await send(
                    "POST", "com.atproto.repo.deleteRecord",
                    body: ["repo": did, "collection": "app.bsky.feed.like", "rkey": String(rkey)], to: server, token: token)
            }
        }
    }

    /// The account's likes, newest first.
    public func accountFavorites(cursor: Cursor?, session: AuthSession) async throws -> Page {
        var parameters = ["actor": try did(session), "limit": String(Self.pageSize)]
        parameters["cursor"] = cursor?.rawValue
        let page: BFeedPage = try await authorized(session) { server, token in
            try await send("GET", "app.bsky.feed.getActorLikes", parameters, to: server, token: token)
        }
        return Page(items: (page.feed ?? []).compactMap(item(from:)), next: page.cursor.map { Cursor($0) })
    }

    /// An account call with the host's session: a refused token is `unauthorized`, so the host
    /// refreshes the session and calls once more.
    private func authorized<T>(_ session: AuthSession, _ body: (URL, String) async throws -> T) async throws -> T {
        do {
            return try await body(try pds(session), session.accessToken)
        } catch is SessionExpired {
            throw ProviderError.unauthorized("the Bluesky session's token has expired")
        }
    }

    private func did(_ session: AuthSession) throws -> String {
        guard let did = session.values["did"] else {
            throw ProviderError.unauthorized("the Bluesky session names no account; run `login bluesky` again")
        }
        return did
    }

    func session(from created: BSession, server: URL) throws -> AuthSession {
        guard let access = created.accessJwt, !access.isEmpty, let did = created.did, did.hasPrefix("did:") else {
            throw ProviderError.invalidResponse("Bluesky answered the login without a session")
        }
        if created.active == false {
            throw ProviderError.unauthorized("that Bluesky account is \(created.status ?? "not active")")
        }
        var values = ["did": did, "pds": (created.didDoc?.pds.flatMap(Self.serverURL) ?? server).absoluteString]
        values["handle"] = created.handle
        return AuthSession(
            provider: Self.descriptor.id, account: created.handle.map { "@" + $0 } ?? did, accessToken: access,
            refreshToken: created.refreshJwt.flatMap { $0.isEmpty ? nil : $0 }, expiresAt: Self.expiry(ofJWT: access),
            values: values)
    }

    /// App passwords are four groups of four letters and digits: `abcd-2345-efgh-6789`.
    static func isAppPassword(_ text: String) -> Bool {
        let groups = text.lowercased().split(separator: "-", omittingEmptySubsequences: false)
        return groups.count == 4
            && groups.allSatisfy { $0.count == 4 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// When a JWT expires (its payload's `exp`), read without checking it: the server checks.
    static func expiry(ofJWT token: String) -> Date? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = String(parts[1]).replacing("-", with: "+").replacing("_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let payload = (try? JSONValue(parsing: data))?.plainValue as? [String: Any],
            let exp = payload["exp"] as? Double, exp.isFinite, exp > 0, exp < 1e11
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }

    /// A DID's document: did:plc from the PLC directory, did:web from its host.
    func document(_ did: String) async throws -> BDIDDocument {
        let url: URL?
        if did.hasPrefix("did:plc:") {
            url = plcDirectory.appendingPathComponent(did)
        } else if did.hasPrefix("did:web:") {
            let host = String(did.dropFirst(8)).percentDecoded ?? ""
            url = host.contains("/") ? nil : URL(string: "https://\(host)/.well-known/did.json")
        } else {
            url = nil
        }
        guard let url else { throw ProviderError.invalidArgument("cannot read the DID document of \(did)") }
        let response = try await http.fetch(HTTPRequest(url: url, headers: ["Accept": "application/json"]), failure: error(for:))
        return try response.json(service: "Bluesky's DID directory", what: did)
    }
}
