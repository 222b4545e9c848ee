import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension posix_spawn_file_actions_t {
    /// Closes in the child every descriptor above stderr: a child that outlives us (the service,
    /// mpv) must not hold a pipe that a parent watches for our end (a test harness, a shell's
    /// `$(...)`, the sandbox's parent-alive pipe). Add it after the `dup2` actions that set up
    /// the child's stdin, stdout and stderr.
    ///
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+) closes them in the child, so a
    /// descriptor another thread opens meanwhile is closed too; without it, those open now are.
    public mutating func closeInheritedDescriptors() {
        if let closeFrom = Self.addCloseFrom, closeFrom(&self, 3) == 0 { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&self, fd) }
        }
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Not in Swift's Glibc module (a GNU extension): looked up once.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
}
