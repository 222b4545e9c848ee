import Basics
import Foundation
import Synchronization
import Testing

@Suite struct ChildProcessTests {
    @Test func pipesCarryInputAndOutputAndTheStatusIsKept() throws {
        let child = try ChildProcess(
            "/bin/sh", arguments: ["-c", "read line; echo \"got $line\"; echo oops >&2; exit 3"], standardInput: .pipe,
            standardOutput: .pipe, standardError: .pipe)
        let input = try #require(child.standardInput)
        let output = try #require(child.standardOutput)
        let errors = try #require(child.standardError)
        _ = "hello\n".withCString { write(input, $0, 6) }
        close(input)
        #expect(String(decoding: readToEnd(output), as: UTF8.self) == "got hello\n")
        #expect(String(decoding: readToEnd(errors), as: UTF8.self) == "oops\n")
        close(output)
        close(errors)
        #expect(child.waitUntilExit() == .exited(3))
        #expect(child.terminationStatus == 3 && !child.isRunning)
    }

    @Test func environmentAndDirectoryAreTheChildsOwn() throws {
        let child = try ChildProcess(
            "/bin/sh", arguments: ["-c", "echo \"$GREETING\"; pwd"],
            environment: ["GREETING": "bonjour", "PATH": "/bin:/usr/bin"],
            directory: "/usr", standardOutput: .pipe)
        let output = try #require(child.standardOutput)
        #expect(String(decoding: readToEnd(output), as: UTF8.self) == "bonjour\n/usr\n")
        close(output)
        #expect(child.waitUntilExit().succeeded)
    }

    @Test func terminatedChildrenSayWhichSignal() throws {
        let ended = Mutex<ChildProcess.Ending?>(nil)
        let child = try ChildProcess("/bin/sleep", arguments: ["30"], standardOutput: .null, grouping: .processGroup) { child in
            ended.withLock { $0 = child.ending }
        }
        #expect(child.isRunning)
        #expect(getpgid(child.pid) == child.pid)
        child.terminate()
        #expect(child.waitUntilExit() == .signalled(SIGTERM))
        let deadline = Date().addingTimeInterval(20)
        while ended.withLock({ $0 }) == nil, Date() < deadline { usleep(10_000) }
        #expect(ended.withLock { $0 } == .signalled(SIGTERM))
        child.terminate()  // after the end: nothing is signalled
    }

    /// Once a child is reaped its pid may be another process's: nothing is sent to it, to it
    /// alone or to its group; while it runs, a signal goes through its pidfd.
    @Test func aReapedChildIsNeverSignalled() throws {
        let child = try ChildProcess("/bin/sh", arguments: ["-c", "exit 4"], standardOutput: .null)
        #expect(child.isHeldByPidfd, "this kernel has pidfds (5.3 and later)")
        #expect(child.waitUntilExit() == .exited(4))
        let deadline = Date().addingTimeInterval(20)
        while !child.isReaped, Date() < deadline { usleep(5_000) }
        #expect(child.isReaped)
        #expect(child.terminate(signal: SIGKILL) == false)
        #expect(child.terminateGroup(signal: SIGKILL) == false)

        let sleeper = try ChildProcess("/bin/sleep", arguments: ["30"], standardOutput: .null)
        #expect(sleeper.terminate(signal: SIGKILL))
        #expect(sleeper.waitUntilExit() == .signalled(SIGKILL))
    }

    /// One thread waits for every child (not one each): a hundred children running at once add
    /// no thread of their own.
    @Test func oneThreadWaitsForEveryChild() throws {
        func threads() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0 }
        // The waiting thread is started by the first child.
        try ChildProcess("/bin/true").waitUntilExit()
        let before = threads()
        let children = try (0..<100).map { _ in try ChildProcess("/bin/sleep", arguments: ["30"], standardOutput: .null) }
        let during = threads()
        for child in children { child.terminate() }
        for child in children { #expect(child.waitUntilExit() == .signalled(SIGTERM)) }
        // Other tests start threads of their own meanwhile: far fewer than one per child.
        #expect(during - before < 50, "\(before) threads before, \(during) with 100 children")
    }

    /// `.appending(toFile:)` adds to a file (made 0600), and `.output` sends stderr there too.
    @Test func outputAppendsToAFileWithErrorsBeside() throws {
        let path = NSTemporaryDirectory() + "child-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "before\n".write(toFile: path, atomically: true, encoding: .utf8)
        let child = try ChildProcess(
            "/bin/sh", arguments: ["-c", "echo out; echo err >&2"], standardOutput: .appending(toFile: path),
            standardError: .output, grouping: .session)
        #expect(child.waitUntilExit().succeeded)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "before\nout\nerr\n")
    }

    @Test func aMissingProgramSaysWhy() {
        #expect {
            try ChildProcess("/nonexistent/program")
        } throws: { error in
            (error as? ChildProcess.SpawnError)?.code == ENOENT && "\(error)" == "No such file or directory"
        }
    }

    @Test func theChildHoldsNoneOfOurDescriptors() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let child = try ChildProcess("/bin/sh", arguments: ["-c", "ls /proc/self/fd | wc -l"], standardOutput: .pipe)
        close(fds[1])
        let output = try #require(child.standardOutput)
        // stdin, stdout, stderr and the one ls reads.
        #expect(String(decoding: readToEnd(output), as: UTF8.self).trimming(.whitespacesAndNewlines) == "4")
        close(output)
        child.waitUntilExit()
        // Our pipe's write end is closed everywhere: its read end sees the end at once.
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == 0)
    }
}

@Suite struct SyncTests {
    @Test func aConditionWaitsForItsSignalOrItsTime() {
        let condition = Condition()
        let flag = Mutex(false)
        condition.lock()
        let start = Date()
        #expect(condition.wait(seconds: 0.05) == false)
        #expect(Date().timeIntervalSince(start) >= 0.04)
        condition.unlock()
        detachThread(name: "signaller") {
            sleepThread(seconds: 0.02)
            condition.withLock {
                flag.withLock { $0 = true }
                condition.signal()
            }
        }
        condition.withLock {
            let deadline = Date().addingTimeInterval(20)
            while !flag.withLock({ $0 }), Date() < deadline { condition.wait(seconds: 1) }
        }
        #expect(flag.withLock { $0 })
    }

    @Test func aLockSerializesThreads() {
        let lock = Lock()
        let counter = Mutex(0)
        nonisolated(unsafe) var plain = 0
        let done = Condition()
        let finished = Mutex(0)
        for _ in 0..<4 {
            detachThread {
                for _ in 0..<10_000 { lock.withLock { plain += 1 } }
                counter.withLock { $0 += 10_000 }
                done.withLock {
                    finished.withLock { $0 += 1 }
                    done.broadcast()
                }
            }
        }
        done.withLock { while finished.withLock({ $0 }) < 4 { done.wait(seconds: 1) } }
        #expect(lock.withLock { plain } == counter.withLock { $0 })
    }
}
