import Foundation
import MediaKit
import Testing

@testable import MediaHost

/// The runner providers' helper programs (yt-dlp) go through: real children, real pipes.
@Suite struct SpawnedProgramRunnerTests {
    let runner = SpawnedProgramRunner()

    @Test func outputStatusAndStderrComeBackApart() async throws {
        let output = try await runner.run(
            ProgramCall(program: "sh", arguments: ["-c", "printf 'out'; printf 'WARNING: a\\nERROR: b\\n' >&2; exit 3"]))
        #expect(output.stdout == Array("out".utf8))
        #expect(output.status == 3)
        #expect(output.lastError == "ERROR: b")
    }

    @Test func argumentsAreWordsNotAShellLine() async throws {
        let output = try await runner.run(ProgramCall(program: "printf", arguments: ["%s|", "$(id)", "; rm -rf x", "a b"]))
        #expect(String(decoding: output.stdout, as: UTF8.self) == "$(id)|; rm -rf x|a b|")
    }

    @Test func aMissingProgramIsNotFound() async throws {
        await #expect(throws: ProgramError.notFound("no-such-program-here")) {
            try await runner.run(ProgramCall(program: "no-such-program-here", arguments: []))
        }
    }

    /// A program past its deadline is killed with what it started (yt-dlp runs ffmpeg).
    @Test func theDeadlineKillsTheProgramAndItsChildren() async throws {
        let marker = NSTemporaryDirectory() + "runner-\(UUID().uuidString)"
        await #expect(throws: ProgramError.timedOut("sh", seconds: 1)) {
            try await runner.run(
                ProgramCall(program: "sh", arguments: ["-c", "sleep 30 & echo $! > \(marker); wait"], timeout: 1))
        }
        let child = try #require(
            Int32(String(contentsOfFile: marker, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie awaiting its reaper: either way no longer running.
        var gone = false
        for _ in 0..<100 {
            let state = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.split(separator: " ")
            if state == nil || state?[2] == "Z" { gone = true; break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(gone, "the grandchild \(child) still runs")
    }

    @Test func tooMuchOutputIsCutOff() async throws {
        await #expect(throws: ProgramError.tooMuchOutput("sh", bytes: 1000)) {
            try await runner.run(ProgramCall(program: "sh", arguments: ["-c", "yes"], maxOutput: 1000))
        }
    }

    @Test func cancellingTheCallKillsTheProgram() async throws {
        let runner = runner
        let marker = NSTemporaryDirectory() + "runner-\(UUID().uuidString)"
        let task = Task {
            try await runner.run(
                ProgramCall(program: "sh", arguments: ["-c", "echo $$ > \(marker); exec sleep 30"], timeout: 60))
        }
        var pid: Int32?
        for _ in 0..<300 where pid == nil {
            pid = (try? String(contentsOfFile: marker, encoding: .utf8)).flatMap {
                Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if pid == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let program = try #require(pid)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Reaped by the runner: no such process any more.
        #expect(kill(program, 0) != 0)
    }
}

/// A program's progress lines, as the host reads them for `downloads.progress`.
@Suite struct ProgramProgressTests {
    @Test func readableLinesGiveBytesAndTotal() {
        #expect(ProgramDownloadAttempt.progress("progress 1200 5000 NA").map { $0 == (1200, 5000) } == true)
        #expect(ProgramDownloadAttempt.progress("progress 1200 NA 5100.7").map { $0 == (1200, 5100) } == true)
        #expect(ProgramDownloadAttempt.progress("progress 1200 NA NA").map { $0 == (1200, nil) } == true)
    }

    @Test(arguments: [
        "progress inf 10", "progress -5 10", "progress 1e30 10", "progress nan", "progress", "[download] 5%",
        "progress NA 10",
    ])
    func hostileLinesAreNoProgressAndDoNotTrap(line: String) {
        #expect(ProgramDownloadAttempt.progress(line) == nil)
    }

    @Test func hostileTotalsAreDropped() {
        #expect(ProgramDownloadAttempt.progress("progress 10 inf -3 1e300").map { $0 == (10, nil) } == true)
    }

    /// Counts beyond a petabyte are no counts: their sums could overflow Int64 and trap.
    @Test(arguments: ["progress 8e18 NA", "progress 9223372036854775807 NA", "progress 1125899906842625 NA"])
    func countsBeyondAPetabyteAreNoCounts(line: String) {
        #expect(ProgramDownloadAttempt.progress(line) == nil)
        #expect(ProgramDownloadAttempt.progress("progress 5 " + line.split(separator: " ")[1]).map { $0 == (5, nil) } == true)
    }

    /// Streams that restart at huge counts saturate at the maximum instead of overflowing.
    @Test func restartingHugeStreamsSaturate() {
        let streams = ProgramDownloadAttempt.StreamProgress()
        let most = ByteCount.maximum
        for _ in 0..<5 {
            let (done, total) = streams.update(bytes: Int64.max, total: Int64.max)
            #expect(done <= most && (total ?? 0) <= most)
            _ = streams.update(bytes: 0, total: nil)
        }
        #expect(streams.update(bytes: most, total: most) == (most, most))
        #expect(ByteCount.parse("1125899906842624") == most)
        #expect(ByteCount.parse("5100.7") == 5100)
        #expect(ByteCount.parse("-1") == nil && ByteCount.parse("nan") == nil && ByteCount.checked(-3) == nil)
    }
}
