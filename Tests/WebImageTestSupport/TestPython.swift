package import Foundation

/// The Python that runs the tests' helper scripts with their PyPI packages (botocore, pyarrow):
/// `WEBIMAGE_PYTHON`, else the CI virtual environment's (`scripts/python-deps.sh` installs them
/// there), else `python3` from the path.
package enum TestPython {
    /// The executable, and the arguments that go before a script's path.
    package static var command: (executable: URL, arguments: [String]) {
        let environment = ProcessInfo.processInfo.environment
        if let python = environment["WEBIMAGE_PYTHON"], !python.isEmpty { return (URL(fileURLWithPath: python), []) }
        let cache = environment["XDG_CACHE_HOME"] ?? "\(environment["HOME"] ?? "/tmp")/.cache"
        let venv = "\(cache)/webimage-ci/venv/bin/python"
        if FileManager.default.isExecutableFile(atPath: venv) { return (URL(fileURLWithPath: venv), []) }
        return (URL(fileURLWithPath: "/usr/bin/env"), ["python3"])
    }
}
