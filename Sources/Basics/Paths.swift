import FoundationEssentials
import Glibc

/// Paths as text, as NSString's path methods read them (full Foundation's; these are without it).
public enum Path {
    /// Runs of slashes as one, as NSString reads a path.
    private static func collapsed(_ path: String) -> Substring {
        guard path.contains("//") else { return Substring(path) }
        var out = ""
        for character in path where !(character == "/" && out.hasSuffix("/")) { out.append(character) }
        return Substring(out)
    }

    /// "/a/b/c.mp3" → "/a/b"; "c" → ""; "/c" → "/".
    public static func directory(of path: String) -> String {
        var trimmed = collapsed(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        var head = trimmed[..<slash]
        while head.count > 1, head.hasSuffix("/") { head = head.dropLast() }
        return String(head)
    }

    /// "/a/b/c.mp3" → "c.mp3"; "/a/b/" → "b".
    public static func name(of path: String) -> String {
        var trimmed = collapsed(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return trimmed == "/" ? "/" : String(trimmed[trimmed.index(after: slash)...])
    }

    /// "c.mp3" → "mp3"; "c" and ".profile" → "".
    public static func `extension`(of path: String) -> String {
        let name = name(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// "/a/c.mp3" → "/a/c".
    public static func deletingExtension(_ path: String) -> String {
        let suffix = `extension`(of: path)
        var trimmed = collapsed(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(suffix.isEmpty ? trimmed : trimmed.dropLast(suffix.count + 1))
    }

    /// A program's path: as given when it has a slash (if it can be run), else the first
    /// regular, executable file of that name on PATH (`/usr/local/bin:/usr/bin:/bin` without one).
    public static func findProgram(
        _ program: String, path: String? = ProcessInfo.processInfo.environment["PATH"]
    ) -> String? {
        guard !program.isEmpty else { return nil }
        func runnable(_ candidate: String) -> Bool {
            var info = stat()
            return stat(candidate, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && access(candidate, X_OK) == 0
        }
        if program.contains("/") { return runnable(program) ? program : nil }
        for folder in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(program)"
            if runnable(candidate) { return candidate }
        }
        return nil
    }

    /// "~/x" with the home directory for "~".
    public static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        return homeDirectory() + path.dropFirst()
    }

    /// $HOME, or the user's home directory from the password database.
    public static func homeDirectory() -> String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        if getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, let result, let home = result.pointee.pw_dir {
            return String(cString: home)
        }
        return "/"
    }

    /// $TMPDIR, else /tmp; without a trailing slash.
    public static func temporaryDirectory() -> String {
        var folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return folder
    }
}

/// An error as a person reads it: a file operation's says what the system said ("No such file
/// or directory") where full Foundation's `localizedDescription` did, not its internals.
public func describe(_ error: any Error) -> String {
    if let error = error as? CocoaError {
        if let underlying = error.userInfo["NSUnderlyingError"] as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        switch error.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return String(cString: strerror(ENOENT))
        case .fileReadNoPermission, .fileWriteNoPermission: return String(cString: strerror(EACCES))
        case .fileWriteOutOfSpace: return String(cString: strerror(ENOSPC))
        case .fileWriteVolumeReadOnly: return String(cString: strerror(EROFS))
        case .fileWriteFileExists: return String(cString: strerror(EEXIST))
        case .fileReadInapplicableStringEncoding, .fileReadUnknownStringEncoding: return "not UTF-8 text"
        default: return "file error \(error.code.rawValue)"
        }
    }
    if let error = error as? POSIXError { return String(cString: strerror(error.code.rawValue)) }
    return String(describing: error)
}
