import Foundation
import Testing
import WebImageCore

/// The one version and where it is shown: the change log's newest entry, the README's and the
/// getting-started article's dependency line, and the Swift Package Index's settings
/// (https://swiftpackageindex.com/docs/builds) against the catalogs and the build's packages.
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
}
