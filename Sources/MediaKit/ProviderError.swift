import Basics
import FoundationEssentials
import Glibc

/// What went wrong inside a provider, typed so the host can map it to one RPC error and a person
/// can act on it.
public enum ProviderError: Error, Sendable, Equatable {
    /// The provider does not do this (e.g. categories on Twitter).
    case unsupported(String)
    case notFound(String)
    /// Credentials are missing, invalid or expired.
    case unauthorized(String)
    /// The provider needs configuration before it can be used; the text says how.
    case notConfigured(String)
    /// The service asked us to slow down; retry after this many seconds when known.
    case rateLimited(retryAfter: Double?)
    case quotaExceeded(String)
    /// The service answered with an error status.
    case upstream(status: Int, message: String)
    /// The service answered with something we cannot read.
    case invalidResponse(String)
    /// The service could not be reached.
    case network(String)
    /// The caller asked for something malformed (a bad cursor, an empty query).
    case invalidArgument(String)

    /// A stable short name, used as `data.kind` in RPC errors.
    public var kind: String {
        switch self {
        case .unsupported: "unsupported"
        case .notFound: "notFound"
        case .unauthorized: "unauthorized"
        case .notConfigured: "notConfigured"
        case .rateLimited: "rateLimited"
        case .quotaExceeded: "quotaExceeded"
        case .upstream: "upstream"
        case .invalidResponse: "invalidResponse"
        case .network: "network"
        case .invalidArgument: "invalidArgument"
        }
    }

    public var message: String {
        switch self {
        case .unsupported(let what): what
        case .notFound(let what): what
        case .unauthorized(let why): why
        case .notConfigured(let how): how
        case .rateLimited(let after):
            if let after, let seconds = Int(finite: after.rounded(.up)) {
                "rate limited by the service; try again in \(seconds) s"
            } else {
                "rate limited by the service; try again later"
            }
        case .quotaExceeded(let why): why
        // Status 0: no HTTP answer was seen (a program's run failed); the message says what.
        case .upstream(let status, let message): status > 0 ? "the service answered HTTP \(status): \(message)" : message
        case .invalidResponse(let why): why
        case .network(let why): why
        case .invalidArgument(let why): why
        }
    }
}

extension ProviderError: LocalizedError {
    public var errorDescription: String? { message }
}

extension ProviderError {
    /// The same kind of error, its text after `context` ("its feed failed: …, and yt-dlp failed
    /// too: …"): a person learns every path that was tried.
    public func prefixed(_ context: String) -> ProviderError {
        switch self {
        case .unsupported(let text): .unsupported("\(context): \(text)")
        case .notFound(let text): .notFound("\(context): \(text)")
        case .unauthorized(let text): .unauthorized("\(context): \(text)")
        case .notConfigured(let text): .notConfigured("\(context): \(text)")
        // Its kind says when to come back; the context is in the debug log.
        case .rateLimited: self
        case .quotaExceeded(let text): .quotaExceeded("\(context): \(text)")
        case .upstream(let status, let text):
            .upstream(status: 0, message: "\(context): " + (status > 0 ? "HTTP \(status): \(text)" : text))
        case .invalidResponse(let text): .invalidResponse("\(context): \(text)")
        case .network(let text): .network("\(context): \(text)")
        case .invalidArgument(let text): .invalidArgument("\(context): \(text)")
        }
    }
}

extension ProviderError {
    /// The same error with `secret` masked wherever its text holds it (a hostile or careless
    /// server may echo a password back in its error message).
    public func masking(_ secret: String, with mask: String = "***") -> ProviderError {
        guard !secret.isEmpty else { return self }
        return redacting { $0.replacing(secret, with: mask) }
    }

    /// The same error with its text passed through `clean` (a redactor's).
    public func redacting(_ clean: (String) -> String) -> ProviderError {
        switch self {
        case .unsupported(let text): return .unsupported(clean(text))
        case .notFound(let text): return .notFound(clean(text))
        case .unauthorized(let text): return .unauthorized(clean(text))
        case .notConfigured(let text): return .notConfigured(clean(text))
        case .rateLimited: return self
        case .quotaExceeded(let text): return .quotaExceeded(clean(text))
        case .upstream(let status, let text): return .upstream(status: status, message: clean(text))
        case .invalidResponse(let text): return .invalidResponse(clean(text))
        case .network(let text): return .network(clean(text))
        case .invalidArgument(let text): return .invalidArgument(clean(text))
        }
    }
}
