import Testing
import WebImage
import WebImageTestSupport

@Suite("LoadOptions")
struct LoadOptionsTests {
    @Test("a list of names parses; names of flags that do nothing on Linux are refused with the known ones")
    func parsing() throws {
        #expect(
            try LoadOptions(parsing: "retry-failed, Wait-Store-Cache,,high-priority") == [.retryFailed, .waitStoreCache, .highPriority])
        #expect(try LoadOptions(parsing: "") == [])
        for inert in ["continue-in-background", "force-transition", "preload-all-frames", "match-animated-image-class", "sideways"] {
            #expect {
                try LoadOptions(parsing: "retry-failed,\(inert)")
            } throws: { error in
                let error = error as? WebImageError
                return error?.code == .invalidArgument && error?.message?.contains("unknown option \"\(inert)\"") == true
                    && error?.message?.contains("wait-store-cache") == true
            }
        }
    }
}
