import HostAPI
import JSONRPC
import MediaStore

extension ConfigGet: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let config = host.config
        if let key {
            guard let entry = config.entry(key) else { throw HostError.unknownConfigKey(key) }
            return [entry]
        }
        return config.sortedKeys.compactMap(config.entry)
    }
}

extension ConfigSet: RPCMethod {
    public func run(on host: HostRuntime) async throws -> ConfigEntry {
        guard let info = host.config.keys[key] else { throw HostError.unknownConfigKey(key) }
        let text: String?
        switch value {
        case nil, .null?: text = nil
        case .string(let s)?: text = s
        case .number(let n)?: text = n
        case .bool(let b)?: text = String(b)
        default: throw HostError.invalidConfigValue(key: key, reason: "must be a string, number or boolean")
        }
        if let text, let reason = info.problem(with: text) { throw HostError.invalidConfigValue(key: key, reason: reason) }
        // Secrets stay out of the database (a copied or shared database must carry none).
        if info.secret { try host.secretSettings.set(key, text) } else { try await host.store.setSetting(key, value: text) }
        host.updateConfig { $0.storeValues[key] = text }
        guard let entry = host.config.entry(key) else { throw HostError.unknownConfigKey(key) }
        return entry
    }
}
