import CReadline
import HostAPI
import MediaKit
import Synchronization

/// What tab completion offers, read from the command table: command names, then what each
/// argument position (or the word after a flag) takes: provider ids, categories, methods, settings.
struct Completer: Sendable {
    var providers: [String]
    var methods: [String]
    var configKeys: [String]
    var categories: CategoryCache
    /// Fetches a provider's categories when completion needs them; runs on readline's thread.
    var fetchCategories: @Sendable (String) -> [MediaCategory]?
    /// Providers with accounts (what `login`, `logout` and `sync` take).
    var accountProviders: [String]
    /// The kinds each provider has, for `--kind` after a provider.
    var kinds: [String: [MediaKind]]

    init(
        providers: [String], methods: [String], configKeys: [String], categories: CategoryCache,
        fetchCategories: @escaping @Sendable (String) -> [MediaCategory]?, accountProviders: [String]? = nil,
        kinds: [String: [MediaKind]] = [:]
    ) {
        self.providers = providers
        self.methods = methods
        self.configKeys = configKeys
        self.categories = categories
        self.fetchCategories = fetchCategories
        self.accountProviders = accountProviders ?? providers
        self.kinds = kinds
    }

    static let shared = Mutex<Completer?>(nil)

    /// Candidates for `word`, the text being completed, after `before` (the line up to it).
    func candidates(before: String, word: String) -> [String] {
        let words = before.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let options: [String]
        if words.isEmpty {
            options = CommandSpec.names
        } else if let command = CommandSpec.named(words[0]) {
            // A subcommand's arguments come after its name (`list export <list> <format>`).
            let (spec, line) = command.resolve(CommandWords(words: Array(words.dropFirst()), raw: ""))
            let parsed = spec.parse(line)
            let arguments = parsed.words
            if let last = line.words.last, let option = spec.options.first(where: { $0.name == last }), let kind = option.value {
                // `--kind ` wants its value.
                options = offers(kind, arguments: arguments)
            } else if let last = arguments.last, let kinds = spec.follows[last] {
                options = kinds.flatMap { offers($0, arguments: arguments) }
            } else {
                let positional =
                    arguments.count < spec.arguments.count
                    ? spec.arguments[arguments.count].flatMap { offers($0, arguments: arguments) } : []
                // Options not given yet: once the arguments are there, or when a word starts with "-".
                let unused = spec.options.map(\.name).filter { parsed.options[$0] == nil }
                options = positional + (word.hasPrefix("-") || arguments.count >= spec.arguments.count ? unused : [])
            }
        } else {
            options = []
        }
        return options.filter { $0.lowercased().hasPrefix(word.lowercased()) }.sorted()
    }

    private func offers(_ kind: ArgumentKind, arguments: [String]) -> [String] {
        switch kind {
        case .provider: return providers
        case .accountProvider: return accountProviders
        case .method: return methods
        case .configKey: return configKeys
        case .mediaKind:
            // After a provider, only its kinds.
            let provider = arguments.first { kinds[$0] != nil }
            return (provider.flatMap { kinds[$0] } ?? MediaKind.allCases).map(\.rawValue)
        case .words(let words): return words
        case .category(let position):
            guard position < arguments.count else { return [] }
            let provider = arguments[position]
            var categories = self.categories.get(provider)
            if categories == nil, let fetched = fetchCategories(provider) {
                self.categories.set(provider, fetched)
                categories = fetched
            }
            return (categories ?? []).map(\.name)
        }
    }
}

// readline's completion entry points: the matches for the word at the cursor, one at a time.

nonisolated(unsafe) private var completionMatches: [String] = []
nonisolated(unsafe) private var completionIndex = 0

private let generateMatch: @convention(c) (UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>? = { _, state in
    if state == 0 { completionIndex = 0 }
    guard completionIndex < completionMatches.count else { return nil }
    defer { completionIndex += 1 }
    return strdup(completionMatches[completionIndex])
}

let attemptCompletion:
    @convention(c) (UnsafePointer<CChar>?, Int32, Int32) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = {
        text, start, _ in
        mh_rl_no_default_completion()
        guard let text, let buffer = mh_rl_line_buffer(), let completer = Completer.shared.withLock({ $0 }) else { return nil }
        let line = Array(String(cString: buffer).utf8)
        let before = String(decoding: line.prefix(Int(start)), as: UTF8.self)
        completionMatches = completer.candidates(before: before, word: String(cString: text))
        return rl_completion_matches(text, generateMatch)
    }
