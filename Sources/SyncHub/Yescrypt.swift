import Dispatch
import FoundationEssentials
import Glibc
import MediaKit

/// Passwords hashed with yescrypt, memory-hard, through the system's libcrypt (libxcrypt, on
/// every Debian since 11: it hashes the login passwords in /etc/shadow). Loaded at first use, so
/// no command but the sync server's pays for it. Each hash or check takes about 20 ms and 16 MiB:
/// they run one at a time on a thread of their own, never on a task's thread.
public enum Yescrypt {
    private typealias GensaltRA =
        @convention(c) (UnsafePointer<CChar>?, UInt, UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>?
    private typealias CryptRA =
        @convention(c) (
            UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutablePointer<UnsafeMutableRawPointer?>,
            UnsafeMutablePointer<Int32>
        ) -> UnsafeMutablePointer<CChar>?

    private struct Library: @unchecked Sendable {
        let gensalt: GensaltRA
        let crypt: CryptRA
    }

    private static let library: Result<Library, HashError> = {
        guard let handle = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL) else {
            return .failure(
                HashError(message: "libcrypt.so.1 cannot be loaded (\(String(cString: dlerror()))): install libcrypt1"))
        }
        guard let gensalt = dlsym(handle, "crypt_gensalt_ra"), let crypt = dlsym(handle, "crypt_ra") else {
            return .failure(HashError(message: "libcrypt.so.1 has no crypt_ra: it is not libxcrypt"))
        }
        return .success(
            Library(gensalt: unsafeBitCast(gensalt, to: GensaltRA.self), crypt: unsafeBitCast(crypt, to: CryptRA.self)))
    }()

    public struct HashError: Error, CustomStringConvertible, Sendable {
        public let message: String
        public var description: String { message }
    }

    private static let queue = DispatchQueue(label: "mediahost-yescrypt")

    /// A new hash of `password` (`$y$…`), with a salt from the system's random source.
    public static func hash(_ password: String) async throws(HashError) -> String {
        let result: Result<String, HashError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: hashNow(password)) }
        }
        return try result.get()
    }

    /// Whether `password` is the one `stored` was made from (a comparison in constant time).
    public static func verify(_ password: String, against stored: String) async -> Bool {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: verifyNow(password, against: stored)) }
        }
    }

    public enum Match: Sendable, Equatable {
        /// `admit` said no when its turn came.
        case refused
        case none
        /// The index of the hash the password matches.
        case hash(Int)
    }

    /// The first of `hashes` that `password` matches, checked in one turn of the queue: `admit`
    /// is asked when the turn comes (after the guesses queued before were counted) and `failed`
    /// is told in the same turn, so guesses sent all at once are counted one after the other.
    public static func match(
        _ password: String, among hashes: [String], admit: @escaping @Sendable () -> Bool,
        failed: @escaping @Sendable () -> Void
    ) async -> Match {
        await withCheckedContinuation { continuation in
            queue.async {
                guard admit() else { return continuation.resume(returning: .refused) }
                for (index, hash) in hashes.enumerated() where verifyNow(password, against: hash) {
                    return continuation.resume(returning: .hash(index))
                }
                failed()
                continuation.resume(returning: .none)
            }
        }
    }

    static func hashNow(_ password: String) -> Result<String, HashError> {
        let library: Library
        switch Self.library {
        case .success(let loaded): library = loaded
        case .failure(let error): return .failure(error)
        }
        guard let setting = library.gensalt("$y$", 0, nil, 0) else {
            return .failure(HashError(message: "libcrypt made no yescrypt salt (\(String(cString: strerror(errno))))"))
        }
        defer { free(setting) }
        guard let hashed = run(library, password, String(cString: setting)), hashed.hasPrefix("$y$") else {
            return .failure(HashError(message: "libcrypt could not hash the password with yescrypt"))
        }
        return .success(hashed)
    }

    static func verifyNow(_ password: String, against stored: String) -> Bool {
        guard case .success(let library) = Self.library, stored.hasPrefix("$y$"),
            let hashed = run(library, password, stored)
        else { return false }
        return constantTimeEqual(Array(hashed.utf8), Array(stored.utf8))
    }

    private static func run(_ library: Library, _ password: String, _ setting: String) -> String? {
        var data: UnsafeMutableRawPointer?
        var size: Int32 = 0
        defer { free(data) }
        guard let out = library.crypt(password, setting, &data, &size) else { return nil }
        let text = String(cString: out)
        // libxcrypt's failure tokens start with '*'.
        return text.hasPrefix("*") ? nil : text
    }
}

/// Whether two byte strings are equal, in a time that depends on their lengths only.
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}
