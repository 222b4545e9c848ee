import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension posix_spawn_file_actions_t {
    /// Closes in the child every descriptor above stderr this process has open: a child that
    /// outlives us (the service, mpv) must not hold a pipe that a parent watches for our end (a
    /// test harness, a shell's `$(...)`, the sandbox's parent-alive pipe).
    public mutating func closeInheritedDescriptors(keeping kept: Set<Int32> = []) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2, !kept.contains(fd) { posix_spawn_file_actions_addclose(&self, fd) }
        }
    }
}
