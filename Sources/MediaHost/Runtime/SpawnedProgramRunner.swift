import Basics
import FoundationEssentials
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs providers' helper programs (yt-dlp) as children: no shell, stdin from /dev/null, no
/// inherited descriptor, default signals, a process group of their own so that a deadline or a
/// cancelled call kills what they started too (yt-dlp runs ffmpeg). Output is read on a thread of
/// its own: no pool thread waits on a pipe.
public struct SpawnedProgramRunner: ProgramRunner {
    public init() {}

    public func run(_ call: ProgramCall) async throws -> ProgramOutput {
        guard let executable = Path.findProgram(call.program) else { throw ProgramError.notFound(call.program) }
        let child = try Child.spawn(executable, call: call)
        return try await withTaskCancellationHandler {
            let output = try await BlockingWork.run("program-\(Path.name(of: call.program))") {
                try child.collect(call)
            }
            try Task.checkCancellation()
            return output
        } onCancel: {
            child.kill()
        }
    }

    /// A spawned program (a `ChildProcess` leading a process group) and the read ends of its
    /// stdout and stderr.
    public final class Child: Sendable {
        let process: ChildProcess
        public var pid: pid_t { process.pid }
        let stdout: Int32
        let stderr: Int32

        private init(process: ChildProcess, stdout: Int32, stderr: Int32) {
            self.process = process
            self.stdout = stdout
            self.stderr = stderr
        }

        static func spawn(_ executable: String, call: ProgramCall) throws -> Child {
            let process: ChildProcess
            do {
                process = try ChildProcess(
                    executable, arguments: call.arguments, standardInput: .null, standardOutput: .pipe,
                    standardError: .pipe, grouping: .processGroup)
            } catch {
                throw ProgramError.cannotStart(call.program, reason: error.description)
            }
            guard let stdout = process.standardOutput, let stderr = process.standardError else {
                preconditionFailure("the program's pipes were asked for")
            }
            return Child(process: process, stdout: stdout, stderr: stderr)
        }

        /// Kills the program and everything in its group, unless it was reaped already.
        func kill() {
            process.terminateGroup(signal: SIGKILL)
        }

        /// Reads both pipes to their end within the deadline, then reaps the program.
        func collect(_ call: ProgramCall) throws -> ProgramOutput {
            let deadline = ContinuousClock.now + .milliseconds(Int64(call.timeout * 1000))
            var output: [UInt8] = []
            let (end, errors) = drain(until: deadline) { chunk in
                output += chunk
                return output.count <= call.maxOutput
            }
            switch end {
            case .timedOut: throw ProgramError.timedOut(call.program, seconds: call.timeout)
            case .stopped: throw ProgramError.tooMuchOutput(call.program, bytes: call.maxOutput)
            case .finished: return ProgramOutput(status: reap(), stdout: output, stderr: errors)
            }
        }

        /// Hands each line of stdout to `onLine` until the program's output ends (no deadline: a
        /// download takes what it takes; `kill` ends it), then reaps it. Lines longer than 64 KB
        /// are cut.
        func follow(_ onLine: (String) -> Void) -> ProgramOutput {
            var line: [UInt8] = []
            let (_, errors) = drain(until: nil) { chunk in
                for byte in chunk {
                    if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                        if !line.isEmpty { onLine(String(decoding: line, as: UTF8.self)) }
                        line.removeAll(keepingCapacity: true)
                    } else if line.count < 65536 {
                        line.append(byte)
                    }
                }
                return true
            }
            if !line.isEmpty { onLine(String(decoding: line, as: UTF8.self)) }
            return ProgramOutput(status: reap(), stdout: [], stderr: errors)
        }

        enum DrainEnd { case finished, timedOut, stopped }

        /// Reads stdout (to `onStdout`, which returns false to stop) and stderr (its last 64 KB
        /// kept) until both end, the deadline passes or the reader stops; then closes them, and
        /// kills the program unless its output simply ended.
        private func drain(until deadline: ContinuousClock.Instant?, _ onStdout: (ArraySlice<UInt8>) -> Bool) -> (
            DrainEnd, [UInt8]
        ) {
            defer {
                close(stdout)
                close(stderr)
            }
            var errors: [UInt8] = []
            var open = [stdout, stderr]
            var buffer = [UInt8](repeating: 0, count: 65536)
            var end = DrainEnd.finished
            reading: while !open.isEmpty {
                var wait: Int32 = 1000
                if let deadline {
                    let left = deadline - ContinuousClock.now
                    guard left > .zero else {
                        end = .timedOut
                        break
                    }
                    wait = Int32(min(left.milliseconds, 1000))
                }
                var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                let ready = poll(&fds, nfds_t(fds.count), wait)
                if ready < 0, errno == EINTR { continue }
                guard ready > 0 else { continue }
                for entry in fds where entry.revents != 0 {
                    let count = read(entry.fd, &buffer, buffer.count)
                    if count < 0, errno == EINTR || errno == EAGAIN { continue }
                    if count <= 0 {
                        open.removeAll { $0 == entry.fd }
                    } else if entry.fd == stderr {
                        errors += buffer[0..<count]
                        if errors.count > 65536 { errors.removeFirst(errors.count - 65536) }
                    } else if !onStdout(buffer[0..<count]) {
                        end = .stopped
                        break reading
                    }
                }
            }
            if end != .finished {
                kill()
                _ = reap()
            }
            return (end, errors)
        }

        /// Waits for the program to end: its exit status, or 128 + the signal that ended it.
        private func reap() -> Int32 {
            process.waitUntilExit().status
        }
    }
}
