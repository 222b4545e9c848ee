// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]
/// The shipped modules see a module's extensions only where a file imports it: Foundation's
/// (which a dependency's `import struct Foundation.Data` loads) would otherwise win overloads
/// such as `contains(_:)` and link full Foundation and its ICU data (34 MB) back in.
/// Nor do they ask the linker for full Foundation (a module that loads Foundation, as TOMLKit's
/// `import struct Foundation.Data` did, names Foundation, CoreFoundation and ICU to the linker
/// ahead of FoundationEssentials, and the linker then takes functions both define from
/// Foundation, with all they need).
let shipped =
    strict + [
        .enableUpcomingFeature("MemberImportVisibility"),
        .unsafeFlags(
            ["Foundation", "CoreFoundation", "FoundationInternationalization", "_FoundationICU"].flatMap {
                ["-Xfrontend", "-disable-autolink-library", "-Xfrontend", $0]
            }),
    ]

/// A compiled-in provider: three targets from Providers/<name>/{Sources,Sandbox,Tests}: the module
/// (which sees only the SDK), its sandbox replica, and its tests against that replica and against
/// the real services' recorded answers in Tests/Recorded (read from disk, see SOURCES.md there).
struct Provider {
    var name: String
    /// Extra dependencies of the replica and of the tests.
    var sandbox: [Target.Dependency] = []
    var tests: [Target.Dependency] = []

    var targets: [Target] {
        [
            .target(name: name, dependencies: ["MediaKit"], path: "Providers/\(name)/Sources", swiftSettings: shipped),
            .target(
                name: "\(name)Sandbox",
                dependencies: ["Sandbox", .product(name: "Hummingbird", package: "hummingbird")] + sandbox,
                path: "Providers/\(name)/Sandbox", swiftSettings: strict),
            .testTarget(
                name: "\(name)Tests",
                dependencies: [
                    .target(name: name), .target(name: "\(name)Sandbox"), "Sandbox", "MediaHTTP", "MediaKit", "TestSupport",
                ] + tests,
                path: "Providers/\(name)/Tests", exclude: ["Recorded"], swiftSettings: strict),
        ]
    }
}

/// Every compiled-in provider, in the order the host lists them: adding one is its folder under
/// Providers/ and a line here (Plugins/ProviderList writes the Swift lists of the host's
/// providers and the sandbox's replicas from it). See Providers/README.md.
let providers: [Provider] = [
    Provider(name: "Podcasts"),
    Provider(name: "YouTube", tests: ["MediaHost", "JSONRPC"]),
    Provider(name: "TMDB", sandbox: ["YouTubeSandbox"], tests: ["MediaHost", "HostPlayer", "JSONRPC"]),
    Provider(name: "Mastodon"),
    Provider(name: "Twitter"),
    Provider(name: "Bluesky", tests: ["MediaHost", "HostPlayer", "JSONRPC"]),
    Provider(name: "PodcastIndex"),
]

let package = Package(
    name: "mediahost",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "mediahost", targets: ["mediahost"]),
        .executable(name: "mediahost-sandbox", targets: ["mediahost-sandbox"]),
        .executable(name: "mediahost-web", targets: ["mediahost-web"]),
        .library(name: "MediaKit", targets: ["MediaKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Without its default traits: FullFoundation would link full Foundation and its ICU data
        // (55 MB) into mediahost, ConfigurationSupport swift-configuration, neither used.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // Named for the web remote's own use of their types (Hummingbird builds on them).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // TLS for the web remote (web.tls_cert, web.tls_key), in mediahost-web only.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // What full Foundation gave and FoundationEssentials does not (locks, threads, child
        // processes, paths, text): the shipped binary links no full Foundation, whose ICU data
        // alone was 34 MB of it.
        .target(name: "Basics", swiftSettings: shipped),
        // The provider SDK: everything a provider module may depend on.
        .target(
            name: "MediaKit",
            dependencies: ["Basics", "JSONRPC", .product(name: "Logging", package: "swift-log")],
            swiftSettings: shipped),
        // JSON values, framing and the JSON-RPC 2.0 connection loop; knows nothing of media.
        .target(name: "JSONRPC", dependencies: ["Basics"], swiftSettings: shipped),
        // The system's SQLite (libsqlite3-dev's header).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // The host's API as types: each method's params and answer, the notifications, what a
        // method does (x-effect), a connection; rpc-spec.json beside them. Depends on nothing of
        // the host: the front ends (REPL, MCP, desktop, web remote) speak it, the runtime answers it.
        .target(
            name: "HostAPI", dependencies: ["Basics", "MediaKit", "JSONRPC", .product(name: "Logging", package: "swift-log")],
            resources: [.embedInCode("rpc-spec.json")],
            swiftSettings: shipped),
        .target(name: "MediaStore", dependencies: ["HostAPI", "MediaKit", "CSQLite"], swiftSettings: shipped),
        .systemLibrary(name: "CReadline", providers: [.apt(["libreadline-dev"])]),
        // libcurl behind a table of functions loaded on first use (libcurl4-openssl-dev's headers).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CAvahi", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        // Pictures: gdk-pixbuf decodes, libchafa draws (kitty, sixel, iTerm2, blocks), both loaded
        // at first use so the binary runs without them.
        .target(name: "CPictures", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        .target(name: "Pictures", dependencies: ["CPictures", "Basics"], swiftSettings: shipped),
        // The libcurl implementation of MediaKit's HTTPClient.
        .target(name: "MediaHTTP", dependencies: ["MediaKit", "CCurl"], swiftSettings: shipped),
        .target(
            name: "MediaHost",
            dependencies: [
                "HostAPI", "MediaKit", "JSONRPC", "MediaStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: shipped),
        // What is built on the runtime, each depending on it and on none of the others.
        .target(
            name: "HostPlugins",
            dependencies: ["MediaHost", "MediaKit", "JSONRPC"],
            resources: [.embedInCode("provider-spec.json")], swiftSettings: shipped),
        .target(name: "HostPlayer", dependencies: ["MediaHost", "MediaKit", "MediaStore", "JSONRPC"], swiftSettings: shipped),
        .target(
            name: "HostShare", dependencies: ["MediaHost", "MediaKit", "MediaStore", "JSONRPC", "CAvahi"],
            swiftSettings: shipped),
        .target(name: "HostService", dependencies: ["MediaHost", "JSONRPC"], swiftSettings: shipped),
        // The session bus through sd-bus (libsystemd.so.0, loaded at first use).
        .target(name: "CDBus", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        // The desktop: media keys (MPRIS2) and notifications.
        .target(
            name: "HostDesktop", dependencies: ["HostAPI", "MediaHost", "MediaKit", "MediaStore", "JSONRPC", "CDBus"],
            swiftSettings: shipped),
        // Podcast sync with other devices (gpodder.net's API, Nextcloud's gpoddersync).
        .target(
            name: "HostSync", dependencies: ["MediaHost", "MediaKit", "MediaStore", "JSONRPC", "SyncHub"],
            swiftSettings: shipped),
        // The household's own sync server (gpodder.net's API v2, Nextcloud gpoddersync's routes),
        // its accounts hashed with yescrypt (the system's libcrypt, loaded at first use): served
        // by mediahost-web, used in-process by the desk's own sync rounds and `mediahost users`.
        .target(name: "SyncHub", dependencies: ["MediaStore", "MediaKit", "JSONRPC", "Basics"], swiftSettings: shipped),
        // The web remote, the service's side (`web.listen`, `web.*`): it runs mediahost-web and
        // tells it the desk's calls; the paired browsers' file. No HTTP server here.
        .target(
            name: "HostWebLink", dependencies: ["HostAPI", "MediaHost", "MediaKit", "JSONRPC", "Basics"],
            swiftSettings: shipped),
        // The web remote's server: the page, JSON-RPC over WebSocket relayed to the service's
        // socket, artwork, streams and pairing on one HTTP port, on Hummingbird 2 and its
        // WebSocket module. Only mediahost-web links it: no other command loads SwiftNIO.
        .target(
            name: "HostWeb",
            dependencies: [
                "HostWebLink", "HostService", "HostAPI", "MediaHost", "MediaKit", "JSONRPC", "Basics", "Pictures", "SyncHub",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTLS", package: "hummingbird"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [
                .embedInCode("Page/index.html"), .embedInCode("Page/app.js"), .embedInCode("Page/app.css"),
                .embedInCode("Page/pair.html"), .embedInCode("Page/pair.js"), .embedInCode("Page/icon.svg"),
            ],
            swiftSettings: shipped),
        .executableTarget(
            name: "mediahost-web", dependencies: ["HostWeb", "HostAPI", "JSONRPC", "Basics", "Pictures"],
            swiftSettings: shipped,
            linkerSettings: [.unsafeFlags(["-use-ld=lld"])]),
        // The Model Context Protocol over the host's methods (`mediahost mcp`); sees only the API (HostAPI).
        .target(name: "HostMCP", dependencies: ["HostAPI", "JSONRPC", "Pictures"], swiftSettings: shipped),
        // The local replica server framework; each provider adds its replica under Providers/<Name>/Sandbox.
        .target(
            name: "Sandbox",
            dependencies: ["MediaKit", .product(name: "Hummingbird", package: "hummingbird")],
            swiftSettings: strict),
        .target(
            name: "MediaREPL",
            dependencies: [
                "HostAPI", "Basics", "MediaKit", "JSONRPC", "CReadline", "Pictures",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: shipped),
        // The compiled-in providers and host modules, registered by the executables: the runtime
        // imports none.
        .target(
            name: "BuiltinProviders",
            dependencies: [
                "MediaHost", "HostPlugins", "HostPlayer", "HostShare", "HostDesktop", "HostSync", "HostWebLink", "MediaKit",
            ]
                + providers.map { .target(name: $0.name) },
            swiftSettings: shipped, plugins: ["ProviderList"]),
        .plugin(name: "ProviderList", capability: .buildTool()),
        // The product: links no HTTP server (the sandbox and the web remote's server are processes of their own).
        .executableTarget(
            name: "mediahost",
            dependencies: [
                "MediaHost", "HostPlugins", "HostPlayer", "HostShare", "HostService", "HostSync", "HostMCP", "MediaREPL",
                "JSONRPC", "MediaHTTP", "Pictures", "SyncHub",
                "BuiltinProviders", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: shipped,
            // Linked at a fixed address (not position-independent, as Go links by default): the
            // statically linked runtime and Foundation carry hundreds of thousands of pointers
            // that a position-independent executable has the loader rewrite at every start (1.5-2
            // ms of each `mediahost call`, most of it page faults). Libraries, heap and stacks
            // are still placed at random.
            linkerSettings: [
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-pie"])
            ]),
        // The replicas of every provider's API, started by `--sandbox` and `mediahost sandbox`.
        .executableTarget(
            name: "mediahost-sandbox",
            dependencies: [
                "Sandbox", "MediaKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + providers.map { .target(name: "\($0.name)Sandbox") },
            swiftSettings: strict, plugins: ["ProviderList"]),
        .executableTarget(
            name: "mediahost-bench",
            dependencies: [
                "MediaHost", "MediaStore", "MediaKit", "JSONRPC", "MediaHTTP", "Sandbox", "PodcastsSandbox", "Podcasts",
                "BuiltinProviders", "Pictures",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Benchmarks/mediahost-bench",
            swiftSettings: strict),

        // Test doubles and helpers: used by test targets only, never by the shipped binary.
        .target(
            name: "TestSupport",
            dependencies: [
                "MediaKit", "MediaHost", "JSONRPC", "Sandbox", "MediaHTTP",
            ],
            path: "Tests/TestSupport",
            swiftSettings: strict),

        .testTarget(name: "MediaKitTests", dependencies: ["MediaKit"], exclude: ["Recorded"], swiftSettings: strict),
        .testTarget(name: "MediaHTTPTests", dependencies: ["MediaHTTP", "MediaKit", "Sandbox"], swiftSettings: strict),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC"], swiftSettings: strict),
        .testTarget(name: "HostAPITests", dependencies: ["HostAPI", "MediaKit", "JSONRPC"], swiftSettings: strict),
        .testTarget(name: "BasicsTests", dependencies: ["Basics"], resources: [.copy("toml-test")], swiftSettings: strict),
        .testTarget(
            name: "MediaStoreTests", dependencies: ["MediaStore", "MediaKit", "CSQLite"], resources: [.copy("Fixtures")],
            swiftSettings: strict),
        .testTarget(
            name: "MediaHostTests",
            // YouTube: imports of YouTube subscriptions go to the provider that knows its channels.
            dependencies: ["MediaHost", "MediaKit", "MediaStore", "JSONRPC", "TestSupport", "Sandbox", "MediaHTTP", "YouTube"],
            exclude: ["Recorded"], swiftSettings: strict),
        // A test target per module on the runtime, as Hummingbird gives each library its own.
        .testTarget(
            name: "HostPlayerTests",
            dependencies: ["HostPlayer", "MediaHost", "MediaKit", "JSONRPC", "TestSupport", "Sandbox", "MediaHTTP"],
            swiftSettings: strict),
        .testTarget(
            name: "HostShareTests", dependencies: ["HostShare", "MediaHost", "MediaKit", "JSONRPC", "TestSupport", "MediaHTTP"],
            swiftSettings: strict),
        .testTarget(
            name: "HostPluginsTests", dependencies: ["HostPlugins", "MediaHost", "MediaKit", "JSONRPC", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "HostServiceTests", dependencies: ["HostService", "MediaHost", "MediaKit", "JSONRPC", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "HostDesktopTests", dependencies: ["HostDesktop", "HostAPI", "MediaKit", "JSONRPC"], swiftSettings: strict),
        .testTarget(
            name: "HostSyncTests", dependencies: ["HostSync", "MediaHost", "MediaKit", "MediaStore", "JSONRPC", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "SyncHubTests",
            dependencies: ["SyncHub", "HostSync", "MediaHost", "MediaStore", "MediaKit", "JSONRPC", "TestSupport"],
            resources: [.copy("Clients")], swiftSettings: strict),
        .testTarget(name: "PicturesTests", dependencies: ["Pictures", "Basics"], exclude: ["Images"], swiftSettings: strict),
        .testTarget(
            name: "HostWebTests",
            dependencies: ["HostWeb", "HostPlayer", "HostAPI", "MediaHost", "MediaKit", "JSONRPC", "TestSupport"],
            swiftSettings: strict),
        .testTarget(name: "HostMCPTests", dependencies: ["HostMCP", "MediaHost", "JSONRPC"], swiftSettings: strict),
        .testTarget(
            name: "MediaREPLTests",
            dependencies: [
                "MediaREPL", "MediaHost", "HostPlayer", "HostSync", "HostWebLink", "MediaKit", "JSONRPC", "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "JSONRPC", "TestSupport", "Sandbox", "MediaHTTP", "MediaKit", "MediaREPL", "BuiltinProviders", "HostPlugins",
                "HostService", "HostPlayer", "mediahost", "Basics",
                "mediahost-sandbox", "YouTubeSandbox",
            ],
            exclude: ["Recorded"], swiftSettings: strict),
    ] + providers.flatMap(\.targets),
    swiftLanguageModes: [.v6]
)
