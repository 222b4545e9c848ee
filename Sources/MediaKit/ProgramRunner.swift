import Basics
import FoundationEssentials
import Glibc

/// Runs a program for a provider (yt-dlp): its words as given (no shell), with a deadline and
/// bounded output. The host's runner spawns it; tests give recorded output.
public protocol ProgramRunner: Sendable {
    /// - Throws: `ProgramError` when it cannot be run, or runs too long or says too much;
    ///   `CancellationError` when the task is cancelled (the program is killed).
    func run(_ call: ProgramCall) async throws -> ProgramOutput
}

/// A program to run.
public struct ProgramCall: Sendable, Equatable {
    /// A name looked up in PATH, or a path.
    public var program: String
    public var arguments: [String]
    /// Seconds before it is killed.
    public var timeout: Double
    /// Bytes of stdout past which it is killed (stderr keeps only its last 64 KB).
    public var maxOutput: Int

    public init(program: String, arguments: [String], timeout: Double = 60, maxOutput: Int = 64 << 20) {
        self.program = program
        self.arguments = arguments
        self.timeout = timeout
        self.maxOutput = maxOutput
    }
}

/// What a program that ran said, and how it ended.
public struct ProgramOutput: Sendable, Equatable {
    /// The exit status, or 128 + the signal that ended it.
    public var status: Int32
    public var stdout: [UInt8]
    public var stderr: [UInt8]

    public init(status: Int32, stdout: [UInt8], stderr: [UInt8]) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// The last line of stderr that says something (yt-dlp's `ERROR: ...`), without control
    /// characters.
    public var lastError: String? {
        let lines = String(decoding: stderr, as: UTF8.self).split(whereSeparator: \.isNewline)
        let line = lines.last { $0.contains("ERROR") } ?? lines.last { !$0.allSatisfy(\.isWhitespace) }
        return line.map { String($0.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init)) }
    }
}

public enum ProgramError: Error, Equatable, CustomStringConvertible {
    /// Not found in PATH (or the path does not exist).
    case notFound(String)
    /// It exists but could not be started (permissions, say).
    case cannotStart(String, reason: String)
    case timedOut(String, seconds: Double)
    case tooMuchOutput(String, bytes: Int)

    public var description: String {
        switch self {
        case .notFound(let program): "\(program) is not installed (not found in PATH)"
        case .cannotStart(let program, let reason): "\(program) cannot be started: \(reason)"
        case .timedOut(let program, let seconds): "\(program) did not finish in \(Int(seconds)) s"
        case .tooMuchOutput(let program, let bytes): "\(program) wrote more than \(bytes >> 20) MB"
        }
    }
}

/// No programs: what a context has unless the host gives it a runner.
public struct NoProgramRunner: ProgramRunner {
    public init() {}
    public func run(_ call: ProgramCall) async throws -> ProgramOutput { throw ProgramError.notFound(call.program) }
}
