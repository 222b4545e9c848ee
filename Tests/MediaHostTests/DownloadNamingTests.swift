import Foundation
import Testing

@testable import MediaHost

@Suite struct DownloadNamingTests {
    let root = "/data/downloads"

    func path(_ name: String, collection: String? = "Show", ext: String? = "mp3", taken: Set<String> = []) async throws -> String
    {
        try await DownloadNaming.path(root: root, provider: "podcasts", collection: collection, name: name, fileExtension: ext) {
            taken.contains($0)
        }
    }

    @Test(arguments: ["../../etc/passwd", "/etc/passwd", "..", ".", "a/../../b", "\\..\\..\\x", "....//....//etc"])
    func traversalStaysInside(name: String) async throws {
        let result = try await path(name, collection: name)
        let standardized = URL(fileURLWithPath: result).standardizedFileURL.path
        #expect(standardized.hasPrefix(root + "/podcasts/"))
        #expect(!result.dropFirst(root.count).contains(".."))
        #expect(result.split(separator: "/").count == root.split(separator: "/").count + 3)
    }

    @Test func controlCharactersAndSeparatorsGo() async throws {
        let result = try await path("Ep\u{0}1:\u{1B}[31m red\ttab\nnew\u{202E}line", collection: "A/B")
        #expect(result == root + "/podcasts/A-B/Ep 1- [31m red tab new line.mp3")
    }

    @Test func longNamesAreBoundedOnCharacterBoundaries() async throws {
        let result = try await path(String(repeating: "é", count: 1000))
        let file = (result as NSString).lastPathComponent
        #expect(file.utf8.count <= DownloadNaming.maxComponentBytes)
        #expect(file.hasSuffix(".mp3"))
        #expect(String(data: Data(file.utf8), encoding: .utf8) != nil)
    }

    @Test func collisionsAreNumbered() async throws {
        let first = root + "/podcasts/Show/Same.mp3"
        let second = root + "/podcasts/Show/Same (2).mp3"
        #expect(try await path("Same") == first)
        #expect(try await path("Same", taken: [first]) == second)
        #expect(try await path("Same", taken: [first, second]) == root + "/podcasts/Show/Same (3).mp3")
    }

    @Test func emptyNamesGetFallbacks() async throws {
        #expect(try await path("   ", collection: nil, ext: "$$$") == root + "/podcasts/Other/download")
        #expect(DownloadNaming.fileExtension("M P 3!") == "mp3")
        #expect(DownloadNaming.component(".hidden", fallback: "x") == "hidden")
    }
}
