import Foundation
import Testing
import WebImageCore

/// The one version and where it is shown: the change log's newest entry, the README's and the
/// getting-started article's dependency line, the Swift Package Index's settings
/// (https://swiftpackageindex.com/docs/builds) against the catalogs and the build's packages, and
/// the public API's size per module as the change log states it.
@Suite("the release: one version, its change log, its package lines")
struct ReleaseTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("the version is semantic (MAJOR.MINOR.PATCH), CHANGELOG.md's newest entry, and the one the README and the article pin")
    func oneVersion() throws {
        let version = WebImageRelease.version
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }, "\(version)")
        let newest = try Self.text("CHANGELOG.md").split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(newest?.hasPrefix("## \(version) ") == true, "\(newest ?? "no entry")")
        let line = ".package(url: \"https://github.com/swift-web-image/swift-web-image.git\", from: \"\(version)\"),"
        #expect(try Self.text("README.md").contains(line))
        #expect(try Self.text("Sources/WebImage/WebImage.docc/GettingStarted.md").contains(line))
    }

    @Test(".spi.yml builds on Linux, documents each module that has a catalog, and names the build's packages")
    func packageIndex() throws {
        let settings = try Self.text(".spi.yml")
        #expect(settings.contains("- platform: linux"))
        let documented = Set(
            settings.split(separator: "\n").compactMap { line -> String? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("- WebImage") else { return nil }
                return String(trimmed.dropFirst(2))
            })
        let catalogs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
            .filter { FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("Sources/\($0)/\($0).docc").path) }
        #expect(documented == Set(catalogs))
        // The build's packages: install-deps.sh's list up to the fonts, which only the tests use.
        let install = try Self.text("scripts/install-deps.sh")
        let list = try #require(install.split(separator: "\n").first { $0.hasPrefix("packages=(") })
        let build = list.dropFirst("packages=(".count).split(separator: " ").prefix { !$0.hasPrefix("fonts-") }.map(String.init)
        let named = settings.split(separator: "\n").filter { $0.hasPrefix("#   ") }.flatMap { $0.dropFirst(4).split(separator: " ") }
        #expect(named.map(String.init) == build)
    }

    @Test("the change log's public declaration count per module is the sources' count")
    func publicCounts() throws {
        let log = try Self.text("CHANGELOG.md")
        let stated = try #require(log.range(of: "per\nmodule at this version: ", options: .regularExpression))
        let list = log[stated.upperBound...].prefix { $0 != "(" }
        let counts = list.split(separator: ",").map { $0.split(whereSeparator: \.isWhitespace) }
        #expect(counts.count > 5, "\(list)")
        for pair in counts {
            let module = String(pair[0])
            let counted = try Self.publicLines(in: "Sources/\(module)")
            #expect(counted == Int(pair[1]), "\(module): the sources have \(counted), the change log says \(pair[1])")
        }
    }

    /// Lines that begin a public or open declaration (attributes before it allowed), as the
    /// change log counts them.
    private static func publicLines(in folder: String) throws -> Int {
        let declaration = #/^\s*(@[A-Za-z]+ )*(public|open) /#
        let files =
            FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path)?
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        return try files.reduce(0) { total, file in
            let text = try Self.text("\(folder)/\(file)")
            return total + text.split(separator: "\n", omittingEmptySubsequences: false).count { $0.firstMatch(of: declaration) != nil }
        }
    }
}
