import BuiltinProviders
import JSONRPC
import MediaHost
import Testing

/// rpc-spec.json names exactly what the shipped build serves: the runtime's methods and
/// notifications and those of the modules it registers (each module's tests check its own are
/// described as they are).
@Suite struct SpecCoverageTests {
    @Test func theSpecNamesWhatTheBuildServes() throws {
        let spec = try RPCDiscover.spec.get()
        let methods = (spec["methods"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        let served = (Dispatcher.runtimeMethods + BuiltinModules.all.flatMap { $0.methods }).map { $0.method }
        #expect(methods.sorted() == served.sorted())
        // The API's list (what HostAPI's clients know) is what the build serves.
        #expect(API.methods.map { $0.method }.sorted() == served.sorted())
        #expect(
            API.notifications.map { $0.method }.sorted()
                == (HostRuntime.runtimeNotifications + BuiltinModules.all.flatMap { $0.notifications }).map { $0.method }.sorted()
        )
        #expect(Set(methods).count == methods.count)
        let notifications = (spec["x-notifications"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        let sent = (HostRuntime.runtimeNotifications + BuiltinModules.all.flatMap { $0.notifications }).map { $0.method }
        #expect(notifications.sorted() == sent.sorted())
    }
}
