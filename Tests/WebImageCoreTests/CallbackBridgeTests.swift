import Testing

@testable import WebImageCore
import WebImageTestSupport

@Suite("withCancellableCallback")
struct CallbackBridgeTests {
    @Test("the callback's value arrives; its cancel action does not run")
    func resumes() async {
        let cancels = Locked(0)
        let value = await withCancellableCallback(cancelled: -1) { resume in
            resume(7)
            resume(8)
            return { cancels.withLock { $0 += 1 } }
        }
        #expect(value == 7 && cancels.withLock { $0 } == 0)
    }

    @Test("cancelling the task, before or after the work started, runs the cancel action and gives the cancelled value")
    func cancels() async {
        let cancels = Locked(0)
        let late = Task {
            await withCancellableCallback(cancelled: -1) { _ in { cancels.withLock { $0 += 1 } } }
        }
        late.cancel()
        #expect(await late.value == -1)
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await withCancellableCallback(cancelled: -2) { _ in { cancels.withLock { $0 += 1 } } }
        }
        #expect(await early.value == -2)
        #expect(cancels.withLock { $0 } == 2)
    }
}
