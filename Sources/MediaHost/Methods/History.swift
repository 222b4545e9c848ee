import HostAPI
import MediaKit
import MediaStore

extension HistoryList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let limit = limit ?? MediaStore.historyLimit
        guard (1...MediaStore.historyLimit).contains(limit) else {
            throw HostError.invalidArgument("limit must be between 1 and \(MediaStore.historyLimit)")
        }
        return try await host.store.history(provider: provider, limit: limit)
    }
}

extension HistoryClear: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        Response(cleared: try await host.store.clearHistory(provider: provider))
    }
}
