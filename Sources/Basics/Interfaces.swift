#if canImport(Glibc)
    import Glibc
#endif

/// The machine's network interfaces.
public enum NetworkInterfaces {
    /// Its IPv4 addresses, those other machines can reach first and loopback last.
    public static func ipv4() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return ["127.0.0.1"] }
        defer { freeifaddrs(list) }
        var found: [String] = []
        var node: UnsafeMutablePointer<ifaddrs>? = first
        while let current = node {
            defer { node = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var ip = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                var inAddress = pointer.pointee.sin_addr
                _ = inet_ntop(AF_INET, &inAddress, &ip, socklen_t(INET_ADDRSTRLEN))
            }
            let text = ip.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if !found.contains(text) { found.append(text) }
        }
        return found.filter { !$0.hasPrefix("127.") } + found.filter { $0.hasPrefix("127.") }
    }
}
