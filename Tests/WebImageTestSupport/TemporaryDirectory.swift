package import Foundation

/// A fresh directory under the system's temporary folder, removed when the test is done with it.
package final class TemporaryDirectory {
    package let url: URL

    package init(_ label: String = "test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    package var path: String { url.path }

    /// Every regular file below the directory, as paths relative to it.
    package func files() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return [] }
        return walker.compactMap { $0 as? String }.filter { relative in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path + "/" + relative, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
