import Foundation
import JSONRPC
import MediaHost
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Everything a test run starts lives under one folder, and nothing outlives the run.
///
/// Each test process makes `TestRun.root` (`$TMPDIR/mediahost-tests-<pid>`), where every
/// temporary data dir goes, and starts a watchdog in a session of its own that waits for the
/// test process to end, however it ends (a crash, `kill -9`, a timeout), and then kills every
/// process whose command line or environment names that folder: the `mediahost` processes the
/// tests started, the sandboxes, services and players those started in turn. A child is known by
/// what it carries, not by its parent, so daemons that detached (a `serve` started by a REPL, an
/// mpv in its own session) are found too.
public enum TestRun {
    public static let root: String = {
        Descriptor.ignoreBrokenPipes()
        let root = NSTemporaryDirectory() + "mediahost-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        startWatchdog(root: root)
        return root
    }()

    private static let watchdogScript = """
        root="$1"; parent="$2"
        while kill -0 "$parent" 2>/dev/null; do sleep 1; done
        for p in /proc/[0-9]*; do
          pid="${p#/proc/}"
          [ "$pid" = "$$" ] && continue
          case "$(tr '\\0' ' ' < "$p/cmdline" 2>/dev/null) $(tr '\\0' ' ' < "$p/environ" 2>/dev/null)" in
            *"$root"*) kill -9 "$pid" 2>/dev/null ;;
          esac
        done
        rm -rf "$root"
        """

    private static func startWatchdog(root: String) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
        // It lives as long as the run: it must hold none of the pipes the tests wait on.
        actions.closeInheritedDescriptors()
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID: a Ctrl-C to the run leaves it to clean up
        let words: [String] = ["/bin/sh", "-c", watchdogScript, "mediahost-test-watchdog", root, String(getpid())]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        // Not in the folder's name space: the watchdog's own command line names the root, and
        // it skips itself.
        _ = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ)
    }
}

/// Runs a program to its end without holding a thread of the cooperative pool (a thread of its
/// own reads its output and waits for it): its exit status (-1 when it cannot start) and stdout.
public func runProgram(_ executable: String, _ arguments: [String], input: [UInt8] = []) async -> (
    status: Int32, output: [UInt8]
) {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: runProgramBlocking(executable, arguments, input: input))
        }
        thread.start()
    }
}

private func runProgramBlocking(_ executable: String, _ arguments: [String], input: [UInt8]) -> (
    status: Int32, output: [UInt8]
) {
    var toChild: [Int32] = [0, 0]
    var fromChild: [Int32] = [0, 0]
    guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { return (-1, []) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    actions.closeInheritedDescriptors()
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    close(toChild[0])
    close(fromChild[1])
    guard spawned == 0 else {
        close(toChild[1])
        close(fromChild[0])
        return (-1, [])
    }
    let inputEnd = toChild[1]
    let writer = Thread {
        Descriptor.writeAll(inputEnd, input)
        close(inputEnd)
    }
    writer.start()
    var output: [UInt8] = []
    Descriptor.readToEnd(fromChild[0]) { output += $0 }
    close(fromChild[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    return ((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), output)
}

/// Every thread's stack of a process that does not answer, read with gdb (which `make test`
/// installs), for the failure's message: a hang seen once in a thousand runs says where it was.
public func stacks(of pid: pid_t) async -> String {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return "(no gdb to read its stacks)" }
    let result = await runProgram(
        "/usr/bin/timeout", ["30", "/usr/bin/gdb", "-batch", "-p", String(pid), "-ex", "thread apply all bt 30"])
    let text = String(decoding: result.output, as: UTF8.self)
    let frames = text.split(separator: "\n").filter { $0.hasPrefix("#") || $0.hasPrefix("Thread ") }
    return frames.isEmpty ? "(gdb read no stack: status \(result.status))" : frames.joined(separator: "\n")
}
