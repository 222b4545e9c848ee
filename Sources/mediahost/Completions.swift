import BuiltinProviders
import MediaHost
import MediaKit

/// What the shells' completion scripts (`--generate-completion-script`) offer beyond the
/// subcommands and options argument-parser knows: the methods `call` takes and the providers'
/// ids, from the tables the host serves them from (no store is opened, nothing is started).
enum Completions {
    static var methods: [String] {
        (Dispatcher.runtimeMethods + BuiltinModules.all.flatMap { $0.methods }).map { $0.method }.sorted()
    }

    /// The compiled-in providers (plugins are named in their folders; `providers` lists them).
    static var providers: [String] { BuiltinProviders.all.map(\.descriptor.id) }
}
