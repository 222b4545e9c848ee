import FoundationEssentials
import JSONRPC

/// One method of the host's API: its params (the struct's properties, by name), its answer and
/// what it does to the user's things. Only the messages, as sourcekit-lsp's
/// `LanguageServerProtocol` keeps requests apart from the server that answers them: a front end
/// (the REPL, the editors' helpers, MCP, the desktop, the web remote) builds these and reads the
/// answers without linking what runs them. The runtime gives each its implementation
/// (`RPCMethod` in MediaHost), and rpc-spec.json is checked against these types by
/// `Tools/spec-check` (params and answers, names and types, required or not).
public protocol APIMethod: Codable, Sendable {
    associatedtype Response: Codable & Sendable
    static var method: String { get }
    /// What the method does to the user's things (`MethodEffect`).
    static var effect: MethodEffect { get }
    /// Whether the call's network work is bounded by `http.timeout` (interactive calls are; a
    /// device login, which waits for a person, is not).
    static var hasDeadline: Bool { get }
    /// Secrets the call carries that are no setting (a login's password): masked like the
    /// secrets in effect in everything the call logs, answers or stores while it runs.
    var secretsInFlight: [String] { get }
    /// Other names a param is accepted by, and the param each stands for (`list` for `name`).
    static var aliases: [String: String] { get }
}

extension APIMethod {
    public static var hasDeadline: Bool { true }
    public var secretsInFlight: [String] { [] }
    public static var aliases: [String: String] { [:] }
}

/// Takes secrets out of a text before it leaves the host (the runtime's `Redactor`): what a
/// notification's `redacted(by:)` is given.
public protocol Redacting: Sendable {
    func redact(_ text: String) -> String
    func redact(bytes: [UInt8]) -> [UInt8]
}

/// The forms a secret travels in, for a method's `secretsInFlight`.
public enum SecretForms {
    /// The value of an HTTP Basic Authorization header (base64 of "user:password"): a server
    /// that echoes the header back shows the password in this form.
    public static func basicCredential(user: String, password: String) -> String {
        Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// A password's forms as they travel: itself and the Basic header's value (each of which
    /// the redactor's patterns take in their JSON and percent encodings too).
    public static func password(_ password: String, user: String?) -> [String] {
        guard let user, !user.isEmpty else { return [password] }
        return [password, basicCredential(user: user, password: password)]
    }
}
